/* The simulated device: an index to remember, the page size as allocation
 * granularity, and plain aligned host memory. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/host/host_internal.h"

#define SC_HOST_ALLOC_ALIGN 64 /* a cache line: abort words and error records stay apart */

sc_result_t sc_host_device_open(int device_index, sc_device_t **device) {
  if (device_index < 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                    "simulated device index %d is negative", device_index);
  long page = sysconf(_SC_PAGESIZE);
  sc_device_t *d = calloc(1, sizeof(*d));
  if (d == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_HOST_LOG, "no memory for a simulated device");
  d->index = device_index;
  d->granularity = page > 0 ? (size_t)page : 4096;
  SC_TRACE(SC_HOST_LOG, "simulated device %d open (granularity %zu bytes)", d->index,
           d->granularity);
  *device = d;
  return SYMCOMM_OK;
}

void sc_host_device_close(sc_device_t *device) { free(device); }

sc_result_t sc_host_available(char *why, size_t len) {
  if (len > 0)
    why[0] = '\0';
  return SYMCOMM_OK;
}

/* A simulated device's bus id is the topology's (virtual, per simulated host). */
sc_result_t sc_host_device_busid(sc_device_t *device, char *buf, size_t len) {
  (void)device;
  if (len > 0)
    buf[0] = '\0';
  return SYMCOMM_OK;
}

/* Every address of the process is the simulated device's memory. */
sc_result_t sc_host_ptr_check(sc_device_t *device, const void *ptr, size_t bytes, const char *what) {
  (void)device;
  (void)ptr;
  (void)bytes;
  (void)what;
  return SYMCOMM_OK;
}

size_t sc_host_granularity(sc_device_t *device) { return device->granularity; }

sc_result_t sc_host_host_alloc(sc_device_t *device, size_t bytes, void **ptr) {
  (void)device;
  void *p = NULL;
  int rc = posix_memalign(&p, SC_HOST_ALLOC_ALIGN, bytes > 0 ? bytes : 1);
  if (rc != 0)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_HOST_LOG,
                    "cannot allocate %zu bytes of host memory for the simulated device", bytes);
  memset(p, 0, bytes);
  *ptr = p;
  return SYMCOMM_OK;
}

void sc_host_host_free(sc_device_t *device, void *ptr) {
  (void)device;
  free(ptr);
}

/* The simulated device's own memory is the process's: the same allocation as
 * host memory it shares with the host. */
sc_result_t sc_host_dev_alloc(sc_device_t *device, size_t bytes, void **ptr) {
  return sc_host_host_alloc(device, bytes, ptr);
}

void sc_host_dev_free(sc_device_t *device, void *ptr) { sc_host_host_free(device, ptr); }

sc_result_t sc_host_upload(sc_device_t *device, void *dst, const void *src, size_t bytes) {
  (void)device;
  if (bytes > 0)
    memcpy(dst, src, bytes);
  return SYMCOMM_OK;
}

/* Programs read the word while the host writes it: atomically, both. */
void sc_host_copy_word(sc_device_t *device, uint32_t *dst, const uint32_t *src) {
  (void)device;
  __atomic_store_n(dst, __atomic_load_n(src, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

/* The copy above is done when it returns. */
void sc_host_copy_word_settle(sc_device_t *device) { (void)device; }
