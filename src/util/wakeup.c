#include "util/wakeup.h"

#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/log.h"

sc_result_t sc_wakeup_open(sc_wakeup_t *w) {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_INIT, "eventfd failed");
  *w = (sc_wakeup_t){.fd = fd, .event = -1, .followed = -1};
  return SYMCOMM_OK;
}

void sc_wakeup_signal(sc_wakeup_t *w) {
  uint64_t one = 1;
  /* Never read back, so the fd stays readable; a full counter is still readable. */
  ssize_t n = write(w->joined ? w->event : w->fd, &one, sizeof(one));
  (void)n;
}

bool sc_wakeup_is_signalled(const sc_wakeup_t *w) {
  struct pollfd p = {.fd = w->fd, .events = POLLIN};
  return poll(&p, 1, 0) == 1;
}

void sc_wakeup_close(sc_wakeup_t *w) {
  if (w->fd >= 0)
    close(w->fd);
  if (w->joined && w->event >= 0)
    close(w->event);
  w->fd = -1;
  w->joined = w->following = false;
}

/* An epoll set is readable while any fd in it is (level-triggered), so the
 * waits that poll w's fd need not know that it follows another. */
sc_result_t sc_wakeup_follow(sc_wakeup_t *w, int other) {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_INIT, "epoll_create1 failed");
  struct epoll_event own = {.events = EPOLLIN, .data.fd = w->fd};
  struct epoll_event theirs = {.events = EPOLLIN, .data.fd = other};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &own) != 0) {
    close(ep);
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_INIT, "epoll_ctl of the wakeup failed");
  }
  if (epoll_ctl(ep, EPOLL_CTL_ADD, other, &theirs) != 0) {
    close(ep);
    return SC_RAISE_ERRNO(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "fd %d cannot be watched", other);
  }
  w->event = w->fd;
  w->fd = ep;
  w->followed = other;
  w->joined = w->following = true;
  return SYMCOMM_OK;
}

void sc_wakeup_unfollow(sc_wakeup_t *w) {
  if (!w->following)
    return;
  /* The caller may close its fd once we return: take it out now. */
  epoll_ctl(w->fd, EPOLL_CTL_DEL, w->followed, NULL);
  w->following = false;
}

bool sc_wakeup_followed_ready(const sc_wakeup_t *w) {
  if (!w->following)
    return false;
  /* Asked of the set, not of the fd number: once the caller closed its fd
   * (which it may do early), the set no longer holds it, while the number
   * reads as ready (POLLNVAL) or names another file by now. */
  struct epoll_event ev[2];
  int n = epoll_wait(w->fd, ev, 2, 0);
  for (int i = 0; i < n; i++)
    if (ev[i].data.fd == w->followed)
      return true;
  return false;
}
