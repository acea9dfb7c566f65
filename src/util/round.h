/* Rounding sizes up without wrapping around: (n + unit - 1) / unit * unit
 * turns a size near SIZE_MAX into a small one. */
#ifndef SC_UTIL_ROUND_H
#define SC_UTIL_ROUND_H

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

#endif
