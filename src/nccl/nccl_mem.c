/* Memory and registration. ncclMemAlloc takes no communicator, but symcomm
 * allocates window-capable memory through one: it uses a communicator of
 * this process on the caller's current device (any, on simulated GPUs), and
 * the buffer lives until ncclMemFree or that communicator's end (a later
 * ncclMemFree of it then succeeds and does nothing). Windows are
 * symcomm's (collective, like NCCL's); ncclCommRegister is a local
 * registration that symcomm needs nothing for, so it only records the range
 * for its deregistration. */
#include <stdlib.h>

#include "shim.h"

typedef struct shim_alloc {
  void *ptr;
  ncclComm_t comm;
  struct shim_alloc *next;
} shim_alloc_t;

static pthread_mutex_t shim_alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static shim_alloc_t *shim_allocs;

SHIM_API ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (ptr == NULL || size == 0)
    return shim_fail(ncclInvalidArgument, "ncclMemAlloc: %zu bytes into %p", size, (void *)ptr);
  ncclComm_t comm = shim_comm_any(shim_current_device());
  if (comm == NULL)
    return shim_fail(ncclInvalidUsage,
                     "ncclMemAlloc: symcomm allocates window memory through a communicator; make "
                     "one (ncclCommInitRank) on this device first");
  shim_alloc_t *a = malloc(sizeof(*a));
  if (a == NULL)
    return shim_fail(ncclSystemError, "ncclMemAlloc: no memory for a record");
  void *p = NULL;
  ncclResult_t res = shim_result(symcomm_mem_alloc(comm->sc, size, &p), comm->sc);
  if (res != ncclSuccess) {
    free(a);
    return res;
  }
  *a = (shim_alloc_t){p, comm, NULL};
  pthread_mutex_lock(&shim_alloc_lock);
  a->next = shim_allocs;
  shim_allocs = a;
  pthread_mutex_unlock(&shim_alloc_lock);
  *ptr = p;
  return ncclSuccess;
}
SHIM_PROFILED(ncclMemAlloc);

SHIM_API ncclResult_t ncclMemFree(void *ptr) {
  pthread_mutex_lock(&shim_alloc_lock);
  shim_alloc_t *a = NULL;
  for (shim_alloc_t **p = &shim_allocs; *p != NULL; p = &(*p)->next)
    if ((*p)->ptr == ptr) {
      a = *p;
      *p = a->next;
      break;
    }
  pthread_mutex_unlock(&shim_alloc_lock);
  if (a == NULL)
    return shim_fail(ncclInvalidArgument, "ncclMemFree: %p is not a buffer of ncclMemAlloc (or freed already)", ptr);
  /* Freed with its communicator already: NCCL's programs (nccl-tests among
   * them) free buffers after destroying the communicators. */
  ncclResult_t res = a->comm == NULL ? ncclSuccess : shim_result(symcomm_mem_free(a->comm->sc, ptr), a->comm->sc);
  if (res != ncclSuccess) {
    /* still allocated (a window of it is registered): a later ncclMemFree may free it */
    pthread_mutex_lock(&shim_alloc_lock);
    a->next = shim_allocs;
    shim_allocs = a;
    pthread_mutex_unlock(&shim_alloc_lock);
    return res;
  }
  free(a);
  return res;
}
SHIM_PROFILED(ncclMemFree);

void shim_mem_forget(ncclComm_t comm) {
  pthread_mutex_lock(&shim_alloc_lock);
  for (shim_alloc_t **p = &shim_allocs; *p != NULL;) {
    if ((*p)->comm == comm)
      (*p)->comm = NULL; /* its memory went with the communicator; ncclMemFree forgets it */
    p = &(*p)->next;
  }
  pthread_mutex_unlock(&shim_alloc_lock);
}

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
  symcomm_window_t w = NULL;
  res = shim_result(symcomm_window_register(comm->sc, buff, size, &w), comm->sc);
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
