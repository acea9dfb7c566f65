/* Rounding sizes up without wrapping around: (n + unit - 1) / unit * unit
 * turns a size near SIZE_MAX into a small one. */
#ifndef SC_UTIL_ROUND_H
#define SC_UTIL_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n rounded up to a multiple of unit (> 0); 0 when that does not fit in a
 * size_t (or n is 0). */
static inline size_t sc_round_up(size_t n, size_t unit) {
  size_t rest = n % unit;
  if (rest == 0)
    return n;
  return n > SIZE_MAX - (unit - rest) ? 0 : n + (unit - rest);
}

/* Whether [p, p + bytes) runs past the end of the address space: no buffer
 * can, and a pointer sum past it would wrap to low memory. */
static inline bool sc_range_wraps(const void *p, size_t bytes) {
  return bytes > 0 && bytes - 1 > UINTPTR_MAX - (uintptr_t)p;
}

#endif
