/* Condition variables that time out on the monotonic clock, the clock of
 * every symcomm deadline (util/clock.h). */
#include <errno.h>

#include "backend/host/host_internal.h"
#include "util/clock.h"

sc_result_t sc_host_cond_init(pthread_cond_t *cond) {
  pthread_condattr_t attr;
  int rc = pthread_condattr_init(&attr);
  if (rc == 0)
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0)
    rc = pthread_cond_init(cond, &attr);
  pthread_condattr_destroy(&attr);
  if (rc != 0) {
    errno = rc;
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_HOST_LOG, "pthread_cond_init failed");
  }
  return SYMCOMM_OK;
}

int sc_host_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms) {
  if (deadline_ms == SC_DEADLINE_NEVER)
    return pthread_cond_wait(cond, mutex);
  if (sc_now_ms() >= deadline_ms)
    return ETIMEDOUT;
  struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};
  int rc = pthread_cond_timedwait(cond, mutex, &ts);
  return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}
