/* A GPU of this process: its primary context (retained while any handle made
 * with it lives), host memory it maps, its own memory, and checks of the
 * pointers callers pass as data buffers. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "util/clock.h"

sc_result_t sc_cuda_enter(sc_device_t *device, sc_cuda_scope_t *scope) {
  scope->pushed = false;
  CUcontext current = NULL;
  SC_CHECK(SC_CU(cuCtxGetCurrent, (&current), "making device %d's context current", device->ordinal));
  if (current == device->ctx)
    return SYMCOMM_OK;
  SC_CHECK(SC_CU(cuCtxPushCurrent, (device->ctx), "making device %d's context current",
                 device->ordinal));
  scope->pushed = true;
  return SYMCOMM_OK;
}

void sc_cuda_leave(sc_cuda_scope_t *scope) {
  if (!scope->pushed)
    return;
  CUcontext popped = NULL;
  (void)SC_CU(cuCtxPopCurrent, (&popped), "restoring the caller's CUDA context");
  scope->pushed = false;
}

static sc_result_t sc_cuda_attribute(sc_device_t *d, CUdevice_attribute attr, const char *name,
                                     int *value) {
  return SC_CU(cuDeviceGetAttribute, (value, attr, d->dev), "reading %s of device %d", name,
               d->ordinal);
}

/* The device's properties, once its context is current. */
static sc_result_t sc_cuda_device_probe(sc_device_t *d) {
  int fd_ok = 0, vmm = 0, uva = 0;
  SC_CHECK(sc_cuda_attribute(d, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing", &uva));
  if (!uva)
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_CUDA_LOG,
                    "CUDA device %d has no unified addressing, which symcomm needs (host and "
                    "device pointers in one address space)",
                    d->ordinal);
  SC_CHECK(sc_cuda_attribute(d, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                             "virtual memory management support", &vmm));
  if (vmm)
    SC_CHECK(sc_cuda_attribute(d, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                               "POSIX file-descriptor handle support", &fd_ok));
  d->fd_handles = vmm && fd_ok;
  if (d->fd_handles) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = d->ordinal;
    SC_CHECK(SC_CU(cuMemGetAllocationGranularity,
                   (&d->granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                   "reading the allocation granularity of device %d", d->ordinal));
  } else {
    d->granularity = 2u << 20;
    SC_INFO(SC_CUDA_LOG,
            "CUDA device %d: no POSIX file-descriptor handles for cuMemCreate (VMM %s): memory is "
            "shared with CUDA IPC handles (cuMemAlloc + cuIpcGetMemHandle) instead",
            d->ordinal, vmm ? "supported" : "unsupported");
  }
  if (d->granularity == 0)
    return SC_RAISE(SYMCOMM_ERR_DEVICE, SC_CUDA_LOG, "CUDA device %d reports a granularity of 0",
                    d->ordinal);
  char busid[32];
  SC_CHECK(SC_CU(cuDeviceGetPCIBusId, (busid, (int)sizeof(busid), d->dev),
                 "reading the PCI bus id of device %d", d->ordinal));
  for (size_t i = 0; busid[i] != '\0'; i++)
    busid[i] = (char)tolower((unsigned char)busid[i]);
  snprintf(d->busid, sizeof(d->busid), "%s", busid);
  return SYMCOMM_OK;
}

sc_result_t sc_cuda_device_open(int device_index, sc_device_t **device) {
  char why[512];
  if (sc_cuda_driver(why, sizeof(why)) == NULL)
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_CUDA_LOG, "the CUDA backend cannot run here: %s",
                    why);
  int count = 0;
  SC_CHECK(SC_CU(cuDeviceGetCount, (&count), "counting CUDA devices"));
  if (device_index < 0 || device_index >= count) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_CUDA_LOG,
                    "CUDA device %d does not exist: this process sees %d (CUDA_VISIBLE_DEVICES=%s); "
                    "give each rank of a host one of them (SYMCOMM_DEVICE, config.device, or the "
                    "local rank when both are unset)",
                    device_index, count, visible != NULL ? visible : "(unset)");
  }
  sc_device_t *d = calloc(1, sizeof(*d));
  if (d == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_CUDA_LOG, "no memory for a CUDA device");
  d->ordinal = device_index;
  d->refs = 1;
  pthread_mutex_init(&d->lock, NULL);
  sc_result_t res;
  sc_cuda_scope_t scope = {false};
  SC_CHECK_GOTO(SC_CU(cuDeviceGet, (&d->dev, device_index), "opening CUDA device %d", device_index),
                res, fail);
  SC_CHECK_GOTO(SC_CU(cuDevicePrimaryCtxRetain, (&d->ctx, d->dev),
                      "retaining the primary context of CUDA device %d", device_index),
                res, fail);
  SC_CHECK_GOTO(sc_cuda_enter(d, &scope), res, fail_ctx);
  SC_CHECK_GOTO(sc_cuda_device_probe(d), res, fail_scope);
  /* Made here, not at its first copy: copy_word runs under the watch's
   * lock, where nothing should wait for the driver longer than a queueing. */
  SC_CHECK_GOTO(SC_CU(cuStreamCreate, (&d->words, CU_STREAM_NON_BLOCKING),
                      "creating a stream for the stop word's copies on device %d", d->ordinal),
                res, fail_scope);
  SC_CHECK_GOTO(sc_cuda_module_load(d), res, fail_words);
  sc_cuda_leave(&scope);
  SC_INFO(SC_CUDA_LOG, "CUDA device %d open: bus id %s, granularity %zu bytes, memory shared by %s",
          d->ordinal, d->busid, d->granularity,
          d->fd_handles ? "cuMemCreate + POSIX fds" : "CUDA IPC handles");
  *device = d;
  return SYMCOMM_OK;
fail_words:
  (void)SC_CU(cuStreamDestroy, (d->words), "destroying device %d's stop-word stream", d->ordinal);
fail_scope:
  sc_cuda_leave(&scope);
fail_ctx:
  (void)SC_CU(cuDevicePrimaryCtxRelease, (d->dev), "releasing the primary context of device %d",
              device_index);
fail:
  pthread_mutex_destroy(&d->lock);
  free(d);
  return res;
}

void sc_cuda_device_hold(sc_device_t *device) {
  pthread_mutex_lock(&device->lock);
  device->refs++;
  pthread_mutex_unlock(&device->lock);
}

/* The last reference: the kernels go, then the records, then the context. */
void sc_cuda_device_release(sc_device_t *device) {
  if (device == NULL)
    return;
  pthread_mutex_lock(&device->lock);
  int left = --device->refs;
  pthread_mutex_unlock(&device->lock);
  if (left > 0)
    return;
  sc_cuda_scope_t scope;
  bool entered = sc_cuda_enter(device, &scope) == SYMCOMM_OK;
  sc_cuda_module_unload(device);
  if (device->words != NULL) /* idle: every dev_free waited for its copies */
    (void)SC_CU(cuStreamDestroy, (device->words), "destroying device %d's stop-word stream",
                device->ordinal);
  for (sc_cuda_record_page_t *p = device->pages, *next; p != NULL; p = next) {
    next = p->next;
    (void)SC_CU(cuMemFreeHost, (p->records), "freeing the failure records of device %d",
                device->ordinal);
    free(p);
  }
  if (entered)
    sc_cuda_leave(&scope);
  (void)SC_CU(cuDevicePrimaryCtxRelease, (device->dev),
              "releasing the primary context of device %d", device->ordinal);
  pthread_mutex_destroy(&device->lock);
  free(device);
}

void sc_cuda_device_close(sc_device_t *device) { sc_cuda_device_release(device); }

size_t sc_cuda_granularity(sc_device_t *device) { return device->granularity; }

sc_result_t sc_cuda_device_busid(sc_device_t *device, char *buf, size_t len) {
  if (len <= strlen(device->busid))
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG, "%zu bytes cannot hold bus id %s", len,
                    device->busid);
  snprintf(buf, len, "%s", device->busid);
  return SYMCOMM_OK;
}

/* ---- host memory the device maps: pinned, portable, mapped at the same address */

sc_result_t sc_cuda_host_alloc(sc_device_t *device, size_t bytes, void **ptr) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(device, &scope));
  void *p = NULL;
  size_t n = bytes > 0 ? bytes : 1;
  sc_result_t res = SC_CU(cuMemHostAlloc, (&p, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
                          "allocating %zu bytes of host memory for device %d", n, device->ordinal);
  if (res == SYMCOMM_OK) {
    CUdeviceptr seen = 0;
    res = SC_CU(cuMemHostGetDevicePointer, (&seen, p, 0),
                "finding host memory %p in device %d's address space", p, device->ordinal);
    if (res == SYMCOMM_OK && (void *)(uintptr_t)seen != p)
      res = SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_CUDA_LOG,
                     "device %d maps host memory %p at another address (%p): symcomm needs one "
                     "address for both",
                     device->ordinal, p, (void *)(uintptr_t)seen);
    if (res != SYMCOMM_OK)
      (void)SC_CU(cuMemFreeHost, (p), "freeing host memory %p", p);
  }
  if (res == SYMCOMM_OK) {
    memset(p, 0, n);
    *ptr = p;
  }
  sc_cuda_leave(&scope);
  return res;
}

void sc_cuda_host_free(sc_device_t *device, void *ptr) {
  if (ptr == NULL)
    return;
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) != SYMCOMM_OK)
    return;
  (void)SC_CU(cuMemFreeHost, (ptr), "freeing host memory %p of device %d", ptr, device->ordinal);
  sc_cuda_leave(&scope);
}

#define SC_CUDA_SETTLE_MS 60000

sc_result_t sc_cuda_settle(sc_device_t *device, const char *what) {
  int64_t deadline = sc_now_ms() + SC_CUDA_SETTLE_MS;
  for (int round = 0;; round++) {
    CUresult rc = sc_cu.cuStreamQuery(CU_STREAM_LEGACY);
    if (rc == CUDA_SUCCESS)
      return SYMCOMM_OK;
    if (rc != CUDA_ERROR_NOT_READY)
      return SC_CU(cuStreamQuery, (CU_STREAM_LEGACY), "waiting for %s on device %d", what,
                   device->ordinal);
    if (sc_now_ms() >= deadline)
      return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_CUDA_LOG,
                      "%s on device %d did not finish within %d s", what, device->ordinal,
                      SC_CUDA_SETTLE_MS / 1000);
    sc_cuda_poll_pause(round);
  }
}

/* ---- the device's own memory (protocol state, descriptors): zeroed */

sc_result_t sc_cuda_dev_alloc(sc_device_t *device, size_t bytes, void **ptr) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(device, &scope));
  CUdeviceptr p = 0;
  size_t n = bytes > 0 ? bytes : 1;
  sc_result_t res = SC_CU(cuMemAlloc, (&p, n), "allocating %zu bytes on device %d", n, device->ordinal);
  if (res == SYMCOMM_OK) {
    res = SC_CU(cuMemsetD8, (p, 0, n), "zeroing %zu bytes on device %d", n, device->ordinal);
    if (res == SYMCOMM_OK)
      res = sc_cuda_settle(device, "zeroing new device memory");
    if (res != SYMCOMM_OK)
      (void)SC_CU(cuMemFree, (p), "freeing device memory");
  }
  if (res == SYMCOMM_OK)
    *ptr = (void *)(uintptr_t)p;
  sc_cuda_leave(&scope);
  return res;
}

void sc_cuda_dev_free(sc_device_t *device, void *ptr) {
  if (ptr == NULL)
    return;
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) != SYMCOMM_OK)
    return;
  /* A stop word's copy may still be on its way into this memory, from a
   * host word the caller frees next (copy_word's contract). */
  (void)SC_CU(cuStreamSynchronize, (device->words), "waiting for device %d's stop-word copies",
              device->ordinal);
  (void)SC_CU(cuMemFree, ((CUdeviceptr)(uintptr_t)ptr), "freeing device memory %p of device %d", ptr,
              device->ordinal);
  sc_cuda_leave(&scope);
}

sc_result_t sc_cuda_upload(sc_device_t *device, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return SYMCOMM_OK;
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(device, &scope));
  sc_result_t res = SC_CU(cuMemcpyHtoD, ((CUdeviceptr)(uintptr_t)dst, src, bytes),
                          "copying %zu bytes to device %d's memory at %p", bytes, device->ordinal, dst);
  if (res == SYMCOMM_OK)
    res = sc_cuda_settle(device, "a copy to device memory");
  sc_cuda_leave(&scope);
  return res;
}

void sc_cuda_copy_word(sc_device_t *device, uint32_t *dst, const uint32_t *src) {
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) != SYMCOMM_OK)
    return;
  sc_result_t res = SC_CU(cuMemcpyAsync, ((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
                                          sizeof(*dst), device->words),
                          "copying the stop word to device %d's memory at %p", device->ordinal,
                          (void *)dst);
  if (res != SYMCOMM_OK)
    SC_WARN(SC_CUDA_LOG,
            "device %d: the stop word's copy in device memory was not queued; calls already "
            "queued learn of the stop in their waits",
            device->ordinal);
  sc_cuda_leave(&scope);
}

/* Polled, not cuStreamSynchronize: an abort must return even where the
 * device no longer answers. */
#define SC_CUDA_WORD_SETTLE_MS 1000

void sc_cuda_copy_word_settle(sc_device_t *device) {
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) != SYMCOMM_OK)
    return;
  int64_t deadline = sc_now_ms() + SC_CUDA_WORD_SETTLE_MS;
  for (int round = 0;; round++) {
    CUresult rc = sc_cu.cuStreamQuery(device->words);
    if (rc == CUDA_SUCCESS)
      break;
    if (rc != CUDA_ERROR_NOT_READY || sc_now_ms() >= deadline) {
      SC_WARN(SC_CUDA_LOG,
              "device %d: the stop word's copy in device memory has not landed (%s); calls "
              "queued before the stop and started now learn of it in their waits",
              device->ordinal, rc == CUDA_ERROR_NOT_READY ? "still queued after 1 s" : "failed");
      break;
    }
    sc_cuda_poll_pause(round);
  }
  sc_cuda_leave(&scope);
}

/* ---- pointers callers pass as data buffers */

static sc_result_t sc_cuda_pointer_attr(CUdeviceptr p, CUpointer_attribute attr, void *value) {
  CUresult rc = sc_cu.cuPointerGetAttribute(value, attr, p);
  return rc == CUDA_SUCCESS ? SYMCOMM_OK : SYMCOMM_ERR_INVALID_ARGUMENT;
}

sc_result_t sc_cuda_ptr_check(sc_device_t *device, const void *ptr, size_t bytes, const char *what) {
  if (bytes == 0)
    return SYMCOMM_OK;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
  unsigned int type = 0;
  /* Memory the driver does not know (malloc, the stack) has no attributes. */
  if (sc_cuda_pointer_attr(p, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, &type) != SYMCOMM_OK)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "%s (%p, %zu bytes) is host memory the GPU cannot use (not from cudaMalloc, "
                    "symcomm_mem_alloc or another CUDA allocator): on the CUDA backend, data "
                    "buffers are device memory",
                    what, ptr, bytes);
  if (type == CU_MEMORYTYPE_DEVICE) {
    int ordinal = -1;
    unsigned int managed = 0;
    if (sc_cuda_pointer_attr(p, CU_POINTER_ATTRIBUTE_IS_MANAGED, &managed) != SYMCOMM_OK)
      managed = 0;
    if (!managed &&
        sc_cuda_pointer_attr(p, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, &ordinal) == SYMCOMM_OK &&
        ordinal != device->ordinal)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                      "%s (%p, %zu bytes) is memory of CUDA device %d, but this communicator uses "
                      "device %d",
                      what, ptr, bytes, ordinal, device->ordinal);
  }
  CUdeviceptr start = 0;
  size_t size = 0;
  if (sc_cuda_pointer_attr(p, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, &start) == SYMCOMM_OK &&
      sc_cuda_pointer_attr(p, CU_POINTER_ATTRIBUTE_RANGE_SIZE, &size) == SYMCOMM_OK && size > 0 &&
      (p - start > size || bytes > size - (size_t)(p - start)))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "%s (%p, %zu bytes) runs past the end of its allocation (%zu bytes from %p)",
                    what, ptr, bytes, size, (void *)(uintptr_t)start);
  return SYMCOMM_OK;
}

/* ---- failure records of streams */

#define SC_CUDA_RECORDS_PER_PAGE 32

sc_result_t sc_cuda_record_new(sc_device_t *device, sc_cuda_record_t **record) {
  sc_result_t res = SYMCOMM_OK;
  pthread_mutex_lock(&device->lock);
  sc_cuda_record_page_t *page = device->pages;
  if (page == NULL || page->used == page->cap) {
    page = calloc(1, sizeof(*page));
    void *mem = NULL;
    if (page == NULL)
      res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_CUDA_LOG, "no memory for stream records");
    else if ((res = sc_cuda_host_alloc(device, sizeof(sc_cuda_record_t) * SC_CUDA_RECORDS_PER_PAGE,
                                       &mem)) != SYMCOMM_OK) {
      free(page);
    } else {
      page->records = mem;
      page->cap = SC_CUDA_RECORDS_PER_PAGE;
      page->next = device->pages;
      device->pages = page;
    }
  }
  if (res == SYMCOMM_OK)
    *record = &page->records[page->used++];
  pthread_mutex_unlock(&device->lock);
  return res;
}
