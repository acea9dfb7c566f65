/* Exportable device memory. With POSIX fd handles (the usual case): cuMemCreate
 * at the device's granularity, a reserved address range, cuMemMap and
 * cuMemSetAccess; the fd is cuMemExportToShareableHandle's, and a peer maps
 * it the same way into its own range. Where the device has no fd handles:
 * cuMemAlloc, and the CUDA IPC handle travels in a small memfd (so the fd
 * exchange carries it like any other fd). Release is the reverse order:
 * unmap, release the handle, free the range. Memory starts zeroed (signal
 * pads count from 0). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"

#define SC_CUDA_IPC_MAGIC 0x43504953u /* "SIPC" */

/* What the memfd of a CUDA IPC export holds. */
typedef struct sc_cuda_ipc_blob {
  uint32_t magic;
  uint32_t reserved;
  uint64_t bytes;
  CUipcMemHandle handle;
} sc_cuda_ipc_blob_t;

static size_t sc_round_up(size_t n, size_t g) { return (n + g - 1) / g * g; }

static sc_result_t sc_cuda_mem_new(sc_device_t *device, int kind, sc_devmem_t **mem) {
  sc_devmem_t *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_CUDA_LOG, "no memory for a device allocation");
  m->device = device;
  m->kind = kind;
  *mem = m;
  return SYMCOMM_OK;
}

static void sc_cuda_prop(const sc_device_t *d, CUmemAllocationProp *prop) {
  memset(prop, 0, sizeof(*prop));
  prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop->location.id = d->ordinal;
}

/* Reserves a range for m->handle, maps it and lets this device read and write it. */
static sc_result_t sc_cuda_vmm_map(sc_devmem_t *m, const char *what) {
  sc_device_t *d = m->device;
  sc_result_t res;
  SC_CHECK(SC_CU(cuMemAddressReserve, (&m->ptr, m->size, d->granularity, 0, 0),
                 "reserving %zu bytes of address space on device %d for %s", m->size, d->ordinal, what));
  SC_CHECK_GOTO(SC_CU(cuMemMap, (m->ptr, m->size, 0, m->handle, 0),
                      "mapping %zu bytes of %s on device %d", m->size, what, d->ordinal),
                res, fail_reserve);
  CUmemAccessDesc access;
  memset(&access, 0, sizeof(access));
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = d->ordinal;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  SC_CHECK_GOTO(SC_CU(cuMemSetAccess, (m->ptr, m->size, &access, 1),
                      "giving device %d read/write access to %zu bytes of %s", d->ordinal, m->size,
                      what),
                res, fail_map);
  return SYMCOMM_OK;
fail_map:
  (void)SC_CU(cuMemUnmap, (m->ptr, m->size), "unmapping %s", what);
fail_reserve:
  (void)SC_CU(cuMemAddressFree, (m->ptr, m->size), "freeing the address range of %s", what);
  m->ptr = 0;
  return res;
}

static sc_result_t sc_cuda_vmm_alloc(sc_devmem_t *m) {
  sc_device_t *d = m->device;
  CUmemAllocationProp prop;
  sc_cuda_prop(d, &prop);
  sc_result_t res;
  SC_CHECK(SC_CU(cuMemCreate, (&m->handle, m->size, &prop, 0),
                 "allocating %zu bytes of exportable memory on device %d", m->size, d->ordinal));
  SC_CHECK_GOTO(sc_cuda_vmm_map(m, "a new allocation"), res, fail);
  SC_CHECK_GOTO(SC_CU(cuMemsetD8, (m->ptr, 0, m->size), "zeroing %zu bytes on device %d", m->size,
                      d->ordinal),
                res, fail_map);
  SC_CHECK_GOTO(sc_cuda_settle(d, "zeroing a new allocation"), res, fail_map);
  return SYMCOMM_OK;
fail_map:
  (void)SC_CU(cuMemUnmap, (m->ptr, m->size), "unmapping a new allocation");
  (void)SC_CU(cuMemAddressFree, (m->ptr, m->size), "freeing a new allocation's address range");
fail:
  (void)SC_CU(cuMemRelease, (m->handle), "releasing a new allocation");
  return res;
}

static sc_result_t sc_cuda_ipc_alloc(sc_devmem_t *m) {
  sc_device_t *d = m->device;
  SC_CHECK(SC_CU(cuMemAlloc, (&m->ptr, m->size), "allocating %zu bytes on device %d", m->size,
                 d->ordinal));
  sc_result_t res = SC_CU(cuMemsetD8, (m->ptr, 0, m->size), "zeroing %zu bytes on device %d",
                          m->size, d->ordinal);
  if (res == SYMCOMM_OK)
    res = sc_cuda_settle(d, "zeroing a new allocation");
  if (res != SYMCOMM_OK)
    (void)SC_CU(cuMemFree, (m->ptr), "freeing a new allocation");
  return res;
}

static sc_result_t sc_cuda_ipc_import(sc_devmem_t *m, int fd, size_t bytes);
static sc_result_t sc_cuda_vmm_import(sc_devmem_t *m, int fd);

/* A new allocation (fd < 0) or a peer's, imported from fd, the way the device shares memory. */
static sc_result_t sc_cuda_mem_make(sc_device_t *device, size_t bytes, int fd, sc_devmem_t **mem) {
  bool import = fd >= 0;
  int kind = device->fd_handles ? (import ? SC_CUDA_MEM_VMM_IMPORTED : SC_CUDA_MEM_VMM)
                                : (import ? SC_CUDA_MEM_IPC_IMPORTED : SC_CUDA_MEM_IPC);
  sc_devmem_t *m = NULL;
  SC_CHECK(sc_cuda_mem_new(device, kind, &m));
  m->size = sc_round_up(bytes > 0 ? bytes : 1, device->granularity);
  sc_cuda_scope_t scope;
  sc_result_t res = sc_cuda_enter(device, &scope);
  if (res == SYMCOMM_OK) {
    if (import)
      res = device->fd_handles ? sc_cuda_vmm_import(m, fd) : sc_cuda_ipc_import(m, fd, bytes);
    else
      res = device->fd_handles ? sc_cuda_vmm_alloc(m) : sc_cuda_ipc_alloc(m);
    sc_cuda_leave(&scope);
  }
  if (res != SYMCOMM_OK) {
    free(m);
    return res;
  }
  sc_cuda_device_hold(device);
  *mem = m;
  return SYMCOMM_OK;
}

sc_result_t sc_cuda_mem_alloc(sc_device_t *device, size_t bytes, sc_devmem_t **mem) {
  return sc_cuda_mem_make(device, bytes, -1, mem);
}

static sc_result_t sc_cuda_ipc_export(sc_devmem_t *m, int *fd) {
  sc_cuda_ipc_blob_t blob;
  memset(&blob, 0, sizeof(blob));
  blob.magic = SC_CUDA_IPC_MAGIC;
  blob.bytes = m->size;
  SC_CHECK(SC_CU(cuIpcGetMemHandle, (&blob.handle, m->ptr), "making a CUDA IPC handle for %zu bytes",
                 m->size));
  int f = memfd_create("symcomm-cuda-ipc", MFD_CLOEXEC);
  if (f < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_CUDA_LOG, "memfd_create for a CUDA IPC handle");
  if (pwrite(f, &blob, sizeof(blob), 0) != (ssize_t)sizeof(blob)) {
    sc_result_t res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_CUDA_LOG, "writing a CUDA IPC handle");
    close(f);
    return res;
  }
  *fd = f;
  return SYMCOMM_OK;
}

sc_result_t sc_cuda_mem_export(sc_devmem_t *mem, int *fd) {
  if (mem->kind == SC_CUDA_MEM_VMM_IMPORTED || mem->kind == SC_CUDA_MEM_IPC_IMPORTED)
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG, "a peer's allocation cannot be exported again");
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(mem->device, &scope));
  sc_result_t res;
  if (mem->kind == SC_CUDA_MEM_IPC) {
    res = sc_cuda_ipc_export(mem, fd);
  } else {
    int f = -1;
    res = SC_CU(cuMemExportToShareableHandle, (&f, mem->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                "exporting %zu bytes of device %d as a file descriptor", mem->size,
                mem->device->ordinal);
    if (res == SYMCOMM_OK)
      *fd = f;
  }
  sc_cuda_leave(&scope);
  return res;
}

static sc_result_t sc_cuda_ipc_import(sc_devmem_t *m, int fd, size_t bytes) {
  sc_cuda_ipc_blob_t blob;
  ssize_t n = pread(fd, &blob, sizeof(blob), 0);
  if (n != (ssize_t)sizeof(blob) || blob.magic != SC_CUDA_IPC_MAGIC)
    return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_CUDA_LOG,
                    "a peer's memory handle is not a CUDA IPC handle (%zd bytes read): the peer "
                    "shares memory another way (its GPU has POSIX fd handles, this one does not)",
                    n);
  if (blob.bytes < bytes)
    return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_CUDA_LOG,
                    "a peer's allocation has %llu bytes, %zu expected",
                    (unsigned long long)blob.bytes, bytes);
  m->size = (size_t)blob.bytes;
  return SC_CU(cuIpcOpenMemHandle, (&m->ptr, blob.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
               "opening a peer's CUDA IPC handle on device %d", m->device->ordinal);
}

static sc_result_t sc_cuda_vmm_import(sc_devmem_t *m, int fd) {
  SC_CHECK(SC_CU(cuMemImportFromShareableHandle,
                 (&m->handle, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                 "importing a peer's allocation (fd %d) on device %d", fd, m->device->ordinal));
  sc_result_t res = sc_cuda_vmm_map(m, "a peer's allocation");
  if (res != SYMCOMM_OK)
    (void)SC_CU(cuMemRelease, (m->handle), "releasing a peer's allocation");
  return res;
}

sc_result_t sc_cuda_mem_import(sc_device_t *device, int fd, size_t bytes, sc_devmem_t **mem) {
  return sc_cuda_mem_make(device, bytes, fd, mem);
}

void *sc_cuda_mem_ptr(sc_devmem_t *mem) { return (void *)(uintptr_t)mem->ptr; }

size_t sc_cuda_mem_size(sc_devmem_t *mem) { return mem->size; }

void sc_cuda_mem_free(sc_devmem_t *mem) {
  if (mem == NULL)
    return;
  sc_device_t *d = mem->device;
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(d, &scope) == SYMCOMM_OK) {
    switch (mem->kind) {
    case SC_CUDA_MEM_VMM:
    case SC_CUDA_MEM_VMM_IMPORTED:
      (void)SC_CU(cuMemUnmap, (mem->ptr, mem->size), "unmapping %zu bytes on device %d", mem->size,
                  d->ordinal);
      (void)SC_CU(cuMemRelease, (mem->handle), "releasing %zu bytes on device %d", mem->size,
                  d->ordinal);
      (void)SC_CU(cuMemAddressFree, (mem->ptr, mem->size), "freeing %zu bytes of address space on device %d",
                  mem->size, d->ordinal);
      break;
    case SC_CUDA_MEM_IPC:
      (void)SC_CU(cuMemFree, (mem->ptr), "freeing %zu bytes on device %d", mem->size, d->ordinal);
      break;
    case SC_CUDA_MEM_IPC_IMPORTED:
      (void)SC_CU(cuIpcCloseMemHandle, (mem->ptr), "closing a peer's CUDA IPC mapping on device %d",
                  d->ordinal);
      break;
    }
    sc_cuda_leave(&scope);
  }
  free(mem);
  sc_cuda_device_release(d);
}
