/* Public memory and windows. */
#include <stdlib.h>

#include "core/stream.h"
#include "util/log.h"

symcomm_result_t symcomm_mem_alloc(symcomm_comm_t comm, size_t bytes, void **ptr) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  sc_mem_record_t *m = NULL;
  if (ptr == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_mem_alloc: ptr is NULL");
  else if (bytes == 0)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "symcomm_mem_alloc: 0 bytes");
  else if ((res = sc_comm_check_alive(comm)) == SYMCOMM_OK && (m = calloc(1, sizeof(*m))) == NULL)
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for an allocation record");
  if (res == SYMCOMM_OK && (res = comm->ops->mem_alloc(comm->device, bytes, &m->mem)) == SYMCOMM_OK) {
    m->ptr = comm->ops->mem_ptr(m->mem);
    m->bytes = bytes;
    pthread_mutex_lock(&comm->lock);
    m->next = comm->mems;
    comm->mems = m;
    pthread_mutex_unlock(&comm->lock);
    *ptr = m->ptr;
  } else {
    free(m);
  }
  return sc_comm_finish(comm, res);
}

/* The allocation holding [ptr, ptr + bytes), or NULL. Caller holds comm->lock. */
static sc_mem_record_t *sc_mem_find(struct symcomm_comm *comm, const void *ptr, size_t bytes,
                                    sc_mem_record_t ***link) {
  for (sc_mem_record_t **p = &comm->mems; *p != NULL; p = &(*p)->next) {
    const char *base = (*p)->ptr, *c = ptr;
    if (c >= base && c < base + (*p)->bytes && bytes <= (size_t)(base + (*p)->bytes - c)) {
      if (link != NULL)
        *link = p;
      return *p;
    }
  }
  return NULL;
}

symcomm_result_t symcomm_mem_free(symcomm_comm_t comm, void *ptr) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  pthread_mutex_lock(&comm->lock);
  sc_mem_record_t **link = NULL;
  sc_mem_record_t *m = sc_mem_find(comm, ptr, 0, &link);
  if (m == NULL || m->ptr != ptr) {
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                   "symcomm_mem_free: %p is not a buffer from symcomm_mem_alloc on this communicator",
                   ptr);
  } else {
    for (sc_window_t *w = comm->windows; w != NULL && res == SYMCOMM_OK; w = w->next)
      if (w->magic == SC_WINDOW_MAGIC && w->mem == m->mem)
        res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                       "symcomm_mem_free: %p is still registered as a window; free the window first",
                       ptr);
    if (res == SYMCOMM_OK) {
      *link = m->next;
      comm->ops->mem_free(m->mem);
      free(m);
    }
  }
  pthread_mutex_unlock(&comm->lock);
  return sc_comm_finish(comm, res);
}

static sc_result_t sc_window_new(struct symcomm_comm *comm, size_t bytes, void *ptr,
                                 symcomm_window_t *out) {
  SC_CHECK(sc_comm_check_alive(comm));
  if (out == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "the window output pointer is NULL");
  if (bytes == 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN, "a window of 0 bytes");
  sc_devmem_t *mem = NULL;
  size_t offset = 0;
  if (ptr != NULL) {
    pthread_mutex_lock(&comm->lock);
    sc_mem_record_t *m = sc_mem_find(comm, ptr, bytes, NULL);
    if (m != NULL) {
      mem = m->mem;
      offset = (size_t)((char *)ptr - (char *)m->ptr);
    }
    pthread_mutex_unlock(&comm->lock);
    if (m == NULL)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                      "symcomm_window_register: [%p, +%zu) is not inside one buffer from "
                      "symcomm_mem_alloc on this communicator",
                      ptr, bytes);
  }
  sc_window_t *win = NULL;
  SC_CHECK(sc_window_create(&comm->view, bytes, mem, offset, &win));
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
  return sc_comm_finish_during(comm, sc_window_new(comm, bytes, NULL, win), "window creation");
}

symcomm_result_t symcomm_window_register(symcomm_comm_t comm, void *ptr, size_t bytes,
                                         symcomm_window_t *win) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = ptr == NULL ? SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                                           "symcomm_window_register: ptr is NULL")
                                : sc_window_new(comm, bytes, ptr, win);
  return sc_comm_finish_during(comm, res, "window creation");
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
  return sc_comm_finish_during(comm, sc_window_destroy(win, idle), "window release");
}
