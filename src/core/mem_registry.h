/* Buffers of symcomm_mem_alloc belong to the process and the GPU they were
 * allocated on, not to the communicator the call went through (like
 * ncclMemAlloc's): they live until symcomm_mem_free, and any communicator of
 * that device may register them as windows. One registry for the process,
 * under its own mutex; each record counts the windows that use it, and a
 * buffer with windows cannot be freed. */
#ifndef SC_CORE_MEM_REGISTRY_H
#define SC_CORE_MEM_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"

/* Records mem (of device `dev` of the backend `ops`: a communicator's
 * device index) as a buffer of the process. OUT_OF_MEMORY leaves mem the
 * caller's. */
sc_result_t sc_mem_add(const sc_backend_ops_t *ops, int dev, sc_devmem_t *mem, size_t bytes);
/* The buffer of that device holding [ptr, ptr + bytes), counted as used by
 * one more window until sc_mem_drop(*mem); false when there is none. */
bool sc_mem_use(const sc_backend_ops_t *ops, int dev, const void *ptr, size_t bytes,
                sc_devmem_t **mem, size_t *offset);
/* A window of mem is gone. */
void sc_mem_drop(sc_devmem_t *mem);
/* symcomm_mem_free: frees the buffer starting at ptr, of that device or,
 * with ops NULL, of any. INVALID_ARGUMENT when ptr starts none (freed
 * already), INVALID_USAGE while a window uses it. */
sc_result_t sc_mem_remove(const sc_backend_ops_t *ops, int dev, void *ptr);

#endif
