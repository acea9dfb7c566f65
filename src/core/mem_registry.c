/* The process's symcomm_mem_alloc buffers (mem_registry.h). */
#include <pthread.h>
#include <stdlib.h>

#include "core/mem_registry.h"

typedef struct sc_mem_record {
  const sc_backend_ops_t *ops;
  int dev;
  sc_devmem_t *mem; /* holds the device open while it lives (backend.h) */
  void *ptr;
  size_t bytes;
  int windows; /* windows that use it */
  struct sc_mem_record *next;
} sc_mem_record_t;

static pthread_mutex_t sc_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static sc_mem_record_t *sc_mems;

/* Whether m is memory of device dev of ops (any with ops NULL). The
 * simulated devices of a process are all its own memory. */
static bool sc_mem_on(const sc_mem_record_t *m, const sc_backend_ops_t *ops, int dev) {
  return ops == NULL || (m->ops == ops && (m->dev == dev || ops == &sc_backend_host));
}

sc_result_t sc_mem_add(const sc_backend_ops_t *ops, int dev, sc_devmem_t *mem, size_t bytes) {
  sc_mem_record_t *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory for an allocation record");
  *m = (sc_mem_record_t){ops, dev, mem, ops->mem_ptr(mem), bytes, 0, NULL};
  pthread_mutex_lock(&sc_mem_lock);
  m->next = sc_mems;
  sc_mems = m;
  pthread_mutex_unlock(&sc_mem_lock);
  return SYMCOMM_OK;
}

bool sc_mem_use(const sc_backend_ops_t *ops, int dev, const void *ptr, size_t bytes,
                sc_devmem_t **mem, size_t *offset) {
  const char *c = ptr;
  bool found = false;
  pthread_mutex_lock(&sc_mem_lock);
  for (sc_mem_record_t *m = sc_mems; m != NULL && !found; m = m->next) {
    const char *base = m->ptr;
    if (sc_mem_on(m, ops, dev) && c >= base && c < base + m->bytes &&
        bytes <= (size_t)(base + m->bytes - c)) {
      m->windows++;
      *mem = m->mem;
      *offset = (size_t)(c - base);
      found = true;
    }
  }
  pthread_mutex_unlock(&sc_mem_lock);
  return found;
}

void sc_mem_drop(sc_devmem_t *mem) {
  pthread_mutex_lock(&sc_mem_lock);
  for (sc_mem_record_t *m = sc_mems; m != NULL; m = m->next)
    if (m->mem == mem) {
      m->windows--;
      break;
    }
  pthread_mutex_unlock(&sc_mem_lock);
}

sc_result_t sc_mem_remove(const sc_backend_ops_t *ops, int dev, void *ptr) {
  sc_result_t res = SYMCOMM_OK;
  sc_mem_record_t *m = NULL, **link = &sc_mems;
  pthread_mutex_lock(&sc_mem_lock);
  while (*link != NULL && !((*link)->ptr == ptr && sc_mem_on(*link, ops, dev)))
    link = &(*link)->next;
  if ((m = *link) == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_WIN,
                   "symcomm_mem_free: %p is not a buffer from symcomm_mem_alloc%s (or was freed "
                   "already)",
                   ptr, ops != NULL ? " on this communicator's device" : "");
  else if (m->windows > 0)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_WIN,
                   "symcomm_mem_free: %p is still registered as %d window%s; free %s first", ptr,
                   m->windows, m->windows == 1 ? "" : "s", m->windows == 1 ? "it" : "them");
  else
    *link = m->next;
  pthread_mutex_unlock(&sc_mem_lock);
  if (res != SYMCOMM_OK)
    return res;
  /* Outside the lock: the device may take a while to unmap. */
  m->ops->mem_free(m->mem);
  free(m);
  return SYMCOMM_OK;
}
