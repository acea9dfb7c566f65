/* Secrets that the ranks of one communicator share, and values derived from
 * them that only holders of the secret can compute (session ids, socket
 * names, tokens). The keyed function is SipHash-2-4, a pseudo-random function
 * of a 128-bit key: seeing its outputs tells nothing of the key or of other
 * outputs. */
#ifndef SC_UTIL_SECRET_H
#define SC_UTIL_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct sc_secret {
  uint64_t w[2];
} sc_secret_t;

/* SipHash-2-4 of msg under key (key bytes 0-7 are w[0], little endian). */
uint64_t sc_siphash(const sc_secret_t *key, const void *msg, size_t len);

/* 128 bits from the kernel's random source. */
sc_result_t sc_secret_random(sc_secret_t *out);

/* What key gives for (label, a, b, c); different labels never collide. The
 * 128-bit form is two outputs of the 64-bit one. */
uint64_t sc_secret_derive64(const sc_secret_t *key, const char *label, uint64_t a, uint64_t b,
                            uint64_t c);
void sc_secret_derive(const sc_secret_t *key, const char *label, uint64_t a, uint64_t b,
                      uint64_t c, sc_secret_t *out);

/* Folds data (a label, then bytes) into *state: the result depends on every
 * input folded so far, in order, and is as hard to guess as their secret
 * parts together. */
void sc_secret_absorb(sc_secret_t *state, const char *label, const void *data, size_t len);

/* Compares in time independent of where the two differ. */
bool sc_secret_equal(const sc_secret_t *a, const sc_secret_t *b);

/* 32 lowercase hex digits and a NUL. */
#define SC_SECRET_HEX 33
void sc_secret_hex(const sc_secret_t *s, char *out);

#endif
