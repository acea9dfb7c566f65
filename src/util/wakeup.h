/* A file descriptor that becomes readable, and stays readable, once signalled:
 * a thread blocked in poll() on it together with a socket is woken by another
 * thread (used for abort). */
#ifndef SC_UTIL_WAKEUP_H
#define SC_UTIL_WAKEUP_H

#include <stdbool.h>

#include "util/error.h"

typedef struct sc_wakeup {
  int fd;
} sc_wakeup_t;

sc_result_t sc_wakeup_open(sc_wakeup_t *w);
void sc_wakeup_signal(sc_wakeup_t *w);
bool sc_wakeup_is_signalled(const sc_wakeup_t *w);
void sc_wakeup_close(sc_wakeup_t *w);

#endif
