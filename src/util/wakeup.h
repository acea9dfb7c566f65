/* A file descriptor that becomes readable, and stays readable, once signalled:
 * a thread blocked in poll() on it together with a socket is woken by another
 * thread (used for abort). */
#ifndef SC_UTIL_WAKEUP_H
#define SC_UTIL_WAKEUP_H

#include <stdbool.h>

#include "util/error.h"

typedef struct sc_wakeup {
  int fd; /* what waits poll */
  /* Once sc_wakeup_follow made fd an epoll set: the eventfd that signal
   * writes, and whether `followed` (the caller's fd) is in the set now. */
  bool joined, following;
  int event, followed;
} sc_wakeup_t;

sc_result_t sc_wakeup_open(sc_wakeup_t *w);
void sc_wakeup_signal(sc_wakeup_t *w);
bool sc_wakeup_is_signalled(const sc_wakeup_t *w);
void sc_wakeup_close(sc_wakeup_t *w);

/* w's fd becomes readable also while `other` is (a caller's fd that cancels
 * what w interrupts), until sc_wakeup_unfollow. Call it before any other
 * thread has seen w's fd: the fd changes. */
sc_result_t sc_wakeup_follow(sc_wakeup_t *w, int other);
/* `other` no longer counts (w's fd stays the same): safe while others poll. */
void sc_wakeup_unfollow(sc_wakeup_t *w);
/* Whether the followed fd is readable now. */
bool sc_wakeup_followed_ready(const sc_wakeup_t *w);

#endif
