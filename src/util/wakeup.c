#include "util/wakeup.h"

#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/log.h"

sc_result_t sc_wakeup_open(sc_wakeup_t *w) {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_INIT, "eventfd failed");
  w->fd = fd;
  return SYMCOMM_OK;
}

void sc_wakeup_signal(sc_wakeup_t *w) {
  uint64_t one = 1;
  /* Never read back, so the fd stays readable; a full counter is still readable. */
  ssize_t n = write(w->fd, &one, sizeof(one));
  (void)n;
}

bool sc_wakeup_is_signalled(const sc_wakeup_t *w) {
  struct pollfd p = {.fd = w->fd, .events = POLLIN};
  return poll(&p, 1, 0) == 1;
}

void sc_wakeup_close(sc_wakeup_t *w) {
  if (w->fd >= 0)
    close(w->fd);
  w->fd = -1;
}
