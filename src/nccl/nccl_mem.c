/* Memory and registration. ncclMemAlloc takes no communicator, but symcomm
 * reaches the device through one: it allocates through a communicator of
 * this process on the caller's current device (any, on simulated GPUs). The
 * buffer is the process's, as NCCL's is: it outlives that communicator,
 * any communicator of the device may register it as a window, and it lives
 * until ncclMemFree (symcomm_mem_free, which needs no communicator), after
 * every communicator is gone too. Windows are symcomm's (collective, like
 * NCCL's); ncclCommRegister is a local registration that symcomm needs
 * nothing for, so it only records the range for its deregistration. */
#include <stdlib.h>

#include "shim.h"

SHIM_API ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (ptr == NULL)
    return shim_fail(ncclInvalidArgument, "ncclMemAlloc: the output pointer is NULL");
  if (size == 0)
    return shim_fail(ncclInvalidArgument, "ncclMemAlloc: a size of 0 bytes (ask for 1 or more)");
  ncclComm_t comm = shim_comm_any(shim_current_device());
  if (comm == NULL)
    return shim_fail(ncclInvalidUsage,
                     "ncclMemAlloc: symcomm allocates window memory through a communicator; make "
                     "one (ncclCommInitRank) on this device (CUDA device %d) first",
                     shim_current_device());
  return shim_result(symcomm_mem_alloc(comm->sc, size, ptr), comm->sc);
}
SHIM_PROFILED(ncclMemAlloc);

SHIM_API ncclResult_t ncclMemFree(void *ptr) {
  if (ptr == NULL) /* nothing, as NCCL's (cudaFree(NULL)) and free(NULL) */
    return ncclSuccess;
  symcomm_result_t res = symcomm_mem_free(NULL, ptr);
  if (res == SYMCOMM_ERR_INVALID_ARGUMENT)
    return shim_fail(ncclInvalidArgument,
                     "ncclMemFree: %p is not a buffer of ncclMemAlloc (or freed already)", ptr);
  return shim_result(res, NULL); /* still registered as a window: a later ncclMemFree may free it */
}
SHIM_PROFILED(ncclMemFree);

static ncclResult_t shim_reg_add(ncclComm_t comm, void *buf, size_t bytes, symcomm_window_t win,
                                 shim_reg_t **out) {
  shim_reg_t *r = malloc(sizeof(*r));
  if (r == NULL)
    return shim_fail(ncclSystemError, "no memory for a registration");
  *r = (shim_reg_t){buf, bytes, win, NULL};
  pthread_mutex_lock(&comm->lock);
  r->next = comm->regs;
  comm->regs = r;
  pthread_mutex_unlock(&comm->lock);
  *out = r;
  return ncclSuccess;
}

/* Takes the registration out of comm's list; NULL when it is not comm's. */
static shim_reg_t *shim_reg_take(ncclComm_t comm, const void *handle, bool window) {
  shim_reg_t *found = NULL;
  pthread_mutex_lock(&comm->lock);
  for (shim_reg_t **p = &comm->regs; *p != NULL; p = &(*p)->next) {
    bool match = window ? (*p)->win != NULL && (const void *)(*p)->win == handle
                        : (*p)->win == NULL && (const void *)*p == handle;
    if (match) {
      found = *p;
      *p = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&comm->lock);
  return found;
}

SHIM_API ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  ncclResult_t res = shim_comm_ready(comm, "ncclCommRegister");
  if (res != ncclSuccess)
    return res;
  if (buff == NULL || handle == NULL)
    return shim_fail(ncclInvalidArgument, "ncclCommRegister: buff %p, handle %p", buff,
                     (void *)handle);
  shim_reg_t *r = NULL;
  if ((res = shim_reg_add(comm, buff, size, NULL, &r)) == ncclSuccess)
    *handle = r;
  return res;
}
SHIM_PROFILED(ncclCommRegister);

SHIM_API ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  ncclResult_t res = shim_comm_ready(comm, "ncclCommDeregister");
  if (res != ncclSuccess)
    return res;
  shim_reg_t *r = shim_reg_take(comm, handle, false);
  if (r == NULL)
    return shim_fail(ncclInvalidArgument,
                     "ncclCommDeregister: %p is not a registration of this communicator", handle);
  free(r);
  return ncclSuccess;
}
SHIM_PROFILED(ncclCommDeregister);

SHIM_API ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size,
                                             ncclWindow_t *win, int winFlags) {
  ncclResult_t res = shim_comm_ready(comm, "ncclCommWindowRegister");
  if (res != ncclSuccess)
    return res;
  if (win == NULL)
    return shim_fail(ncclInvalidArgument, "ncclCommWindowRegister: win is NULL");
  if ((winFlags & ~NCCL_WIN_COLL_SYMMETRIC) != 0)
    return shim_fail(ncclInvalidArgument, "ncclCommWindowRegister: unknown flags 0x%x", winFlags);
  /* NCCL's default windows (NCCL_WIN_DEFAULT) let each rank pass buffers at
   * any offset of its window; NCCL_WIN_COLL_SYMMETRIC promises the same
   * offsets on every rank, which collectives straight on the windows need. */
  unsigned flags = (winFlags & NCCL_WIN_COLL_SYMMETRIC) != 0 ? 0 : SYMCOMM_WINDOW_ANY_OFFSET;
  symcomm_window_t w = NULL;
  res = shim_result(symcomm_window_register_flags(comm->sc, buff, size, flags, &w), comm->sc);
  shim_reg_t *r = NULL;
  if (res == ncclSuccess && (res = shim_reg_add(comm, buff, size, w, &r)) != ncclSuccess)
    symcomm_window_free(w);
  if (res == ncclSuccess)
    *win = (ncclWindow_t)(void *)w;
  return res;
}
SHIM_PROFILED(ncclCommWindowRegister);

SHIM_API ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  ncclResult_t res = shim_comm_ready(comm, "ncclCommWindowDeregister");
  if (res != ncclSuccess)
    return res;
  shim_reg_t *r = shim_reg_take(comm, win, true);
  if (r == NULL)
    return shim_fail(ncclInvalidArgument,
                     "ncclCommWindowDeregister: %p is not a window of this communicator",
                     (void *)win);
  res = shim_result(symcomm_window_free(r->win), comm->sc);
  free(r);
  return res;
}
SHIM_PROFILED(ncclCommWindowDeregister);
