/* Public memory and windows. */
#include <stdlib.h>

#include "core/mem_registry.h"
#include "core/stream.h"
#include "util/log.h"

/* The device index of comm's rank: with the backend, what a buffer of the
 * process's registry is matched by (mem_registry.h). */
static int sc_mem_dev(const struct symcomm_comm *comm) { return comm->peers[comm->rank].dev; }

symcomm_result_t symcomm_mem_alloc(symcomm_comm_t comm, size_t bytes, void **ptr) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  sc_devmem_t *mem = NULL;
  if (ptr == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_mem_alloc: ptr is NULL");
  else if (bytes == 0)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_mem_alloc: 0 bytes");
  else if ((res = sc_comm_check_alive(comm)) == SYMCOMM_OK &&
           (res = comm->ops->mem_alloc(comm->device, bytes, &mem)) == SYMCOMM_OK) {
    if ((res = sc_mem_add(comm->ops, sc_mem_dev(comm), mem, bytes)) == SYMCOMM_OK)
      *ptr = comm->ops->mem_ptr(mem);
    else
      comm->ops->mem_free(mem);
  }
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_mem_free(symcomm_comm_t comm, void *ptr) {
  sc_error_clear();
  if (comm == NULL) /* after every communicator of the device is gone */
    return sc_mem_remove(NULL, -1, ptr);
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_mem_remove(comm->ops, sc_mem_dev(comm), ptr));
}

static sc_result_t sc_window_new(struct symcomm_comm *comm, size_t bytes, void *ptr,
                                 unsigned flags, symcomm_window_t *out) {
  SC_CHECK(sc_comm_check_alive(comm));
  if (out == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "the window output pointer is NULL");
  if (bytes == 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "a window of 0 bytes");
  sc_devmem_t *mem = NULL;
  size_t offset = 0;
  if (ptr != NULL && !sc_mem_use(comm->ops, sc_mem_dev(comm), ptr, bytes, &mem, &offset))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                    "symcomm_window_register: [%p, +%zu) is not inside one buffer from "
                    "symcomm_mem_alloc on this communicator's device",
                    ptr, bytes);
  sc_window_t *win = NULL;
  sc_result_t res = sc_window_create(&comm->view, bytes, mem, offset,
                                     (flags & SYMCOMM_WINDOW_ANY_OFFSET) != 0, &win);
  if (res != SYMCOMM_OK) {
    if (mem != NULL)
      sc_mem_drop(mem);
    return res;
  }
  pthread_mutex_lock(&comm->lock);
  win->next = comm->windows;
  comm->windows = win;
  pthread_mutex_unlock(&comm->lock);
  *out = win;
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_window_alloc(symcomm_comm_t comm, size_t bytes, symcomm_window_t *win) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish_during(comm, sc_window_new(comm, bytes, NULL, 0, win), "window creation");
}

/* Both register calls, under the name the caller used (for its sentences). */
static symcomm_result_t sc_window_register_as(const char *fn, symcomm_comm_t comm, void *ptr,
                                              size_t bytes, unsigned flags, symcomm_window_t *win) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res;
  if (ptr == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "%s: ptr is NULL", fn);
  else if ((flags & ~SYMCOMM_WINDOW_ANY_OFFSET) != 0)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                   "%s: unknown flags 0x%x (the only one is SYMCOMM_WINDOW_ANY_OFFSET, 0x%x)", fn,
                   flags & ~SYMCOMM_WINDOW_ANY_OFFSET, SYMCOMM_WINDOW_ANY_OFFSET);
  else
    res = sc_window_new(comm, bytes, ptr, flags, win);
  return sc_comm_finish_during(comm, res, "window creation");
}

symcomm_result_t symcomm_window_register_flags(symcomm_comm_t comm, void *ptr, size_t bytes,
                                               unsigned flags, symcomm_window_t *win) {
  return sc_window_register_as("symcomm_window_register_flags", comm, ptr, bytes, flags, win);
}

symcomm_result_t symcomm_window_register(symcomm_comm_t comm, void *ptr, size_t bytes,
                                         symcomm_window_t *win) {
  return sc_window_register_as("symcomm_window_register", comm, ptr, bytes, 0, win);
}

void *symcomm_window_local(symcomm_window_t win) {
  if (win == NULL || win->magic != SC_WINDOW_MAGIC)
    return NULL;
  return win->peer[win->view->rank];
}

void *symcomm_window_peer(symcomm_window_t win, int rank) {
  if (win == NULL || win->magic != SC_WINDOW_MAGIC || rank < 0 || rank >= win->view->nranks)
    return NULL;
  return win->peer[rank];
}

size_t symcomm_window_size(symcomm_window_t win) {
  return win != NULL && win->magic == SC_WINDOW_MAGIC ? win->bytes : 0;
}

symcomm_result_t symcomm_window_free(symcomm_window_t win) {
  sc_error_clear();
  if (win == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_window_free: window is NULL");
  struct symcomm_comm *comm = sc_comm_of_window(win);
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_window_free: not a window");
  if (win->magic == SC_WINDOW_FREED)
    return sc_comm_finish(comm, SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                                         "symcomm_window_free: the window was already freed"));
  /* Work this rank queued may still write through the window: let it finish
   * before the barrier after which peers unmap. The struct stays on the
   * communicator's list, marked freed, so that later use of the handle is
   * reported; destroy releases it. */
  bool idle = sc_comm_drain(comm);
  sc_devmem_t *user = win->owns_mem ? NULL : win->mem;
  sc_result_t res = sc_window_destroy(win, idle);
  /* A registered buffer may go once unmapped; kept mapped, it stays in use. */
  if (user != NULL && idle)
    sc_mem_drop(user);
  return sc_comm_finish_during(comm, res, "window release");
}
