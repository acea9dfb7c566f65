/* The list of memory kept for good (keep.h). */
#include <pthread.h>
#include <stdlib.h>

#include "util/keep.h"

typedef struct sc_kept {
  void *p;
  struct sc_kept *next;
} sc_kept_t;

static pthread_mutex_t sc_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static sc_kept_t *sc_kept_list;

void sc_keep(void *p) {
  sc_kept_t *k = malloc(sizeof(*k));
  if (k == NULL)
    return; /* still never freed; only the leak checker would notice */
  k->p = p;
  pthread_mutex_lock(&sc_kept_lock);
  k->next = sc_kept_list;
  sc_kept_list = k;
  pthread_mutex_unlock(&sc_kept_lock);
}
