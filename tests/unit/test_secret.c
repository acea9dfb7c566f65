/* Secrets and what derives from them (src/util/secret.c): SipHash-2-4 against
 * the reference vectors of its paper, derivations that differ by label and by
 * every number, absorption that depends on order and on every byte, and
 * random secrets that differ. */
#include <string.h>

#include "test_util.h"
#include "util/secret.h"

static sc_secret_t paper_key(void) {
  unsigned char k[16];
  for (int i = 0; i < 16; i++)
    k[i] = (unsigned char)i;
  sc_secret_t key = {{0, 0}};
  for (int i = 0; i < 8; i++) {
    key.w[0] |= (uint64_t)k[i] << (8 * i);
    key.w[1] |= (uint64_t)k[8 + i] << (8 * i);
  }
  return key;
}

int main(void) {
  sc_secret_t key = paper_key();
  unsigned char msg[15];
  for (int i = 0; i < 15; i++)
    msg[i] = (unsigned char)i;
  TEST_ASSERT(sc_siphash(&key, msg, 0) == 0x726fdb47dd0e0e31ULL, "empty: %016llx",
              (unsigned long long)sc_siphash(&key, msg, 0));
  TEST_ASSERT(sc_siphash(&key, msg, 15) == 0xa129ca6149be45e5ULL, "15 bytes: %016llx",
              (unsigned long long)sc_siphash(&key, msg, 15));

  /* Derivations: each label and each number gives another value. */
  uint64_t base = sc_secret_derive64(&key, "session", 1, 2, 3);
  TEST_ASSERT(base == sc_secret_derive64(&key, "session", 1, 2, 3));
  TEST_ASSERT(base != sc_secret_derive64(&key, "fd socket", 1, 2, 3));
  TEST_ASSERT(base != sc_secret_derive64(&key, "session", 0, 2, 3));
  TEST_ASSERT(base != sc_secret_derive64(&key, "session", 1, 0, 3));
  TEST_ASSERT(base != sc_secret_derive64(&key, "session", 1, 2, 0));
  sc_secret_t wide, other = key;
  sc_secret_derive(&key, "session", 1, 2, 3, &wide);
  TEST_ASSERT(wide.w[0] == base && wide.w[1] != base, "the halves of a derivation");
  other.w[1] ^= 1;
  TEST_ASSERT(sc_secret_derive64(&other, "session", 1, 2, 3) != base, "the key's last bit is ignored");

  /* Absorption: order and every byte count. */
  sc_secret_t a = key, b = key, c = key;
  sc_secret_absorb(&a, "x", "abc", 3);
  sc_secret_absorb(&a, "y", "def", 3);
  sc_secret_absorb(&b, "y", "def", 3);
  sc_secret_absorb(&b, "x", "abc", 3);
  TEST_ASSERT(!sc_secret_equal(&a, &b), "absorbing in another order gave the same state");
  sc_secret_absorb(&c, "x", "abd", 3);
  sc_secret_absorb(&c, "y", "def", 3);
  TEST_ASSERT(!sc_secret_equal(&a, &c), "a changed byte gave the same state");
  c = key;
  sc_secret_absorb(&c, "x", "abc", 3);
  sc_secret_absorb(&c, "y", "def", 3);
  TEST_ASSERT(sc_secret_equal(&a, &c), "absorbing is not repeatable");

  /* Random secrets; hex. */
  sc_secret_t r1, r2;
  TEST_OK(sc_secret_random(&r1));
  TEST_OK(sc_secret_random(&r2));
  TEST_ASSERT(!sc_secret_equal(&r1, &r2), "two random secrets are equal");
  char hex[SC_SECRET_HEX];
  sc_secret_hex(&key, hex);
  TEST_ASSERT(strcmp(hex, "07060504030201000f0e0d0c0b0a0908") == 0, "hex %s", hex);
  printf("test_secret: passed\n");
  return 0;
}
