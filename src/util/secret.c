#include "util/secret.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define SC_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

typedef struct sc_sip_state {
  uint64_t v0, v1, v2, v3;
} sc_sip_state_t;

static void sc_sip_round(sc_sip_state_t *s) {
  s->v0 += s->v1;
  s->v1 = SC_ROTL(s->v1, 13);
  s->v1 ^= s->v0;
  s->v0 = SC_ROTL(s->v0, 32);
  s->v2 += s->v3;
  s->v3 = SC_ROTL(s->v3, 16);
  s->v3 ^= s->v2;
  s->v0 += s->v3;
  s->v3 = SC_ROTL(s->v3, 21);
  s->v3 ^= s->v0;
  s->v2 += s->v1;
  s->v1 = SC_ROTL(s->v1, 17);
  s->v1 ^= s->v2;
  s->v2 = SC_ROTL(s->v2, 32);
}

static uint64_t sc_load_le64(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void sc_sip_block(sc_sip_state_t *s, uint64_t m) {
  s->v3 ^= m;
  sc_sip_round(s);
  sc_sip_round(s);
  s->v0 ^= m;
}

uint64_t sc_siphash(const sc_secret_t *key, const void *msg, size_t len) {
  const unsigned char *p = msg;
  sc_sip_state_t s = {.v0 = key->w[0] ^ 0x736f6d6570736575ULL,
                      .v1 = key->w[1] ^ 0x646f72616e646f6dULL,
                      .v2 = key->w[0] ^ 0x6c7967656e657261ULL,
                      .v3 = key->w[1] ^ 0x7465646279746573ULL};
  size_t whole = len - len % 8;
  for (size_t i = 0; i < whole; i += 8)
    sc_sip_block(&s, sc_load_le64(p + i, 8));
  sc_sip_block(&s, ((uint64_t)len << 56) | sc_load_le64(p + whole, len % 8));
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; i++)
    sc_sip_round(&s);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

sc_result_t sc_secret_random(sc_secret_t *out) {
  sc_secret_t s;
  size_t got = 0;
  while (got < sizeof(s)) {
    ssize_t n = getrandom((char *)&s + got, sizeof(s) - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_BOOT, "getrandom failed");
    got += (size_t)n;
  }
  *out = s;
  return SYMCOMM_OK;
}

/* The message of a derivation: a zero-padded label (labels are short
 * constants of this library), which half, and the numbers. */
typedef struct sc_derive_msg {
  char label[24];
  uint64_t half;
  uint64_t a, b, c;
} sc_derive_msg_t;

static uint64_t sc_derive_half(const sc_secret_t *key, const char *label, uint64_t half,
                               uint64_t a, uint64_t b, uint64_t c) {
  sc_derive_msg_t m;
  memset(&m, 0, sizeof(m));
  strncpy(m.label, label, sizeof(m.label) - 1);
  m.half = half;
  m.a = a;
  m.b = b;
  m.c = c;
  return sc_siphash(key, &m, sizeof(m));
}

uint64_t sc_secret_derive64(const sc_secret_t *key, const char *label, uint64_t a, uint64_t b,
                            uint64_t c) {
  return sc_derive_half(key, label, 0, a, b, c);
}

void sc_secret_derive(const sc_secret_t *key, const char *label, uint64_t a, uint64_t b,
                      uint64_t c, sc_secret_t *out) {
  sc_secret_t r = {{sc_derive_half(key, label, 0, a, b, c), sc_derive_half(key, label, 1, a, b, c)}};
  *out = r;
}

void sc_secret_absorb(sc_secret_t *state, const char *label, const void *data, size_t len) {
  /* Two digests of the data under two keys made from the state (128 bits
   * of what the data holds), then both halves of the next state from them. */
  sc_secret_t other = {{state->w[0] ^ 0x5c5c5c5c5c5c5c5cULL, state->w[1]}};
  uint64_t d0 = sc_siphash(state, data, len), d1 = sc_siphash(&other, data, len);
  sc_secret_t next;
  sc_secret_derive(state, label, d0, d1, len, &next);
  *state = next;
}

bool sc_secret_equal(const sc_secret_t *a, const sc_secret_t *b) {
  uint64_t diff = (a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]);
  return diff == 0;
}

void sc_secret_hex(const sc_secret_t *s, char *out) {
  snprintf(out, SC_SECRET_HEX, "%016llx%016llx", (unsigned long long)s->w[0],
           (unsigned long long)s->w[1]);
}
