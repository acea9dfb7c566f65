/* Exportable "device" memory of the simulated backend: an anonymous memfd
 * ("symcomm-<pid>-<n>", so /proc/<pid>/fd tells whose it is), mapped shared.
 * Pages are allocated on first touch, nothing appears in /dev/shm, and the
 * memory goes away with the last process that maps it or holds its fd, so a
 * killed job leaks nothing. Peers of the same host map it from a dup of the
 * fd (passed with SCM_RIGHTS or inherited across fork). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/host/host_internal.h"
#include "util/round.h"

static sc_result_t sc_host_check_size(sc_device_t *device, size_t bytes, const char *what) {
  if (bytes == 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "cannot %s 0 bytes of device memory",
                    what);
  /* It becomes whole pages of a file: both must fit (size_t, then off_t). */
  size_t size = sc_round_up(bytes, device->granularity);
  if (size == 0 || size > (size_t)INT64_MAX)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "cannot %s %zu bytes of device memory: too large", what, bytes);
  return SYMCOMM_OK;
}

static sc_result_t sc_host_map(int fd, size_t size, const char *what, void **ptr) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return SC_RAISE_ERRNO(errno == ENOMEM ? SYMCOMM_ERR_OUT_OF_MEMORY : SYMCOMM_ERR_SYSTEM, SC_WIN,
                          "cannot map %zu bytes of %s", size, what);
  *ptr = p;
  return SYMCOMM_OK;
}

sc_result_t sc_host_mem_alloc(sc_device_t *device, size_t bytes, sc_devmem_t **mem) {
  static unsigned long counter;
  SC_CHECK(sc_host_check_size(device, bytes, "allocate"));
  size_t size = sc_round_up(bytes, device->granularity);
  sc_result_t r = SYMCOMM_OK;
  sc_devmem_t *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for a device allocation");
  char name[64];
  snprintf(name, sizeof(name), "symcomm-%d-%lu", (int)getpid(),
           __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  m->fd = memfd_create(name, MFD_CLOEXEC);
  if (m->fd < 0) {
    r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "memfd_create(%s) failed", name);
    goto fail_struct;
  }
  if (ftruncate(m->fd, (off_t)size) != 0) {
    r = SC_RAISE_ERRNO(errno == EFBIG || errno == ENOSPC ? SYMCOMM_ERR_OUT_OF_MEMORY
                                                         : SYMCOMM_ERR_SYSTEM,
                       SC_WIN, "cannot size %s to %zu bytes", name, size);
    goto fail_fd;
  }
  SC_CHECK_GOTO(sc_host_map(m->fd, size, name, &m->ptr), r, fail_fd);
  m->size = size;
  SC_TRACE(SC_WIN, "allocated %s: %zu bytes at %p", name, size, m->ptr);
  *mem = m;
  return SYMCOMM_OK;

fail_fd:
  close(m->fd);
fail_struct:
  free(m);
  return r;
}

sc_result_t sc_host_mem_export(sc_devmem_t *mem, int *fd) {
  if (mem->fd < 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                    "device memory imported from a peer cannot be exported again");
  int d = fcntl(mem->fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "cannot duplicate the fd of device memory");
  *fd = d;
  return SYMCOMM_OK;
}

sc_result_t sc_host_mem_import(sc_device_t *device, int fd, size_t bytes, sc_devmem_t **mem) {
  SC_CHECK(sc_host_check_size(device, bytes, "import"));
  struct stat st;
  if (fd < 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "cannot import device memory from fd %d: not a file descriptor", fd);
  if (fstat(fd, &st) != 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                          "cannot import device memory from fd %d", fd);
  if (!S_ISREG(st.st_mode))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "cannot import device memory from fd %d: it is not exported device memory "
                    "(not a memory file)",
                    fd);
  if (st.st_size < 0 || (uint64_t)st.st_size < bytes)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "cannot import %zu bytes of device memory from fd %d: it holds only %lld bytes",
                    bytes, fd, (long long)st.st_size);
  sc_devmem_t *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for an imported allocation");
  /* Whole pages of the file: st_size >= bytes, so no page lies past its end. */
  size_t size = sc_round_up(bytes, device->granularity);
  sc_result_t r = sc_host_map(fd, size, "a peer's device memory", &m->ptr);
  if (r != SYMCOMM_OK) {
    free(m);
    return r;
  }
  m->size = size;
  m->fd = -1; /* the mapping keeps the memory alive; the fd stays the caller's */
  *mem = m;
  return SYMCOMM_OK;
}

void *sc_host_mem_ptr(sc_devmem_t *mem) { return mem->ptr; }

size_t sc_host_mem_size(sc_devmem_t *mem) { return mem->size; }

void sc_host_mem_free(sc_devmem_t *mem) {
  if (mem == NULL)
    return;
  /* Unmap first, then let the memfd go: the order the CUDA VMM API also needs. */
  munmap(mem->ptr, mem->size);
  if (mem->fd >= 0)
    close(mem->fd);
  free(mem);
}
