/* Monotonic time in milliseconds and deadlines built on it. */
#ifndef SC_UTIL_CLOCK_H
#define SC_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define SC_DEADLINE_NEVER INT64_MAX

static inline int64_t sc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t sc_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A hint to the CPU inside a polling loop. */
static inline void sc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

static inline int64_t sc_deadline_after(int64_t timeout_ms) {
  if (timeout_ms < 0 || timeout_ms >= SC_DEADLINE_NEVER / 2)
    return SC_DEADLINE_NEVER;
  return sc_now_ms() + timeout_ms;
}

/* Milliseconds left before deadline, clamped to what poll() takes (-1 = forever). */
static inline int sc_poll_timeout(int64_t deadline_ms) {
  if (deadline_ms == SC_DEADLINE_NEVER)
    return -1;
  int64_t left = deadline_ms - sc_now_ms();
  if (left < 0)
    return 0;
  return left > 1000000 ? 1000000 : (int)left;
}

#endif
