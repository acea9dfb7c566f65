#ifndef SC_UTIL_HASH_H
#define SC_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over bytes, continuing from `seed` (use SC_HASH_SEED to start). */
#define SC_HASH_SEED 0xcbf29ce484222325ULL
static inline uint64_t sc_hash64(const void *data, size_t len, uint64_t seed) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = seed;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

#endif
