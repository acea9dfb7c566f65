#include "test_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static inline uint64_t td_hash(uint64_t seed, int rank, uint64_t index) {
  /* splitmix64's finaliser over a sum in which each input has its own odd
   * multiplier, so that neighbouring seeds, ranks and indexes do not collide */
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + (uint64_t)(uint32_t)rank * 0xd1b54a32d192ed03ull +
               index * 0xa0761d6478bd642full;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t td_mix(uint64_t seed, int rank, uint64_t index) { return td_hash(seed, rank, index); }

static unsigned char td_byte(uint64_t seed, int from, size_t i) {
  return (unsigned char)(td_hash(seed, from, i / 8) >> (8 * (i % 8)));
}

void td_fill(void *buf, size_t bytes, uint64_t seed, int from) {
  unsigned char *p = buf;
  size_t whole = bytes / 8 * 8;
  for (size_t w = 0; w < whole; w += 8) {
    uint64_t h = td_hash(seed, from, w / 8);
    memcpy(p + w, &h, 8); /* little-endian: byte i % 8 of the word */
  }
  for (size_t i = whole; i < bytes; i++)
    p[i] = td_byte(seed, from, i);
}

static size_t td_scan(const void *buf, size_t bytes, uint64_t seed, int from, size_t *first) {
  const unsigned char *p = buf;
  size_t wrong = 0;
  *first = bytes;
  for (size_t w = 0; w < bytes; w += 8) {
    uint64_t h = td_hash(seed, from, w / 8);
    size_t n = bytes - w < 8 ? bytes - w : 8;
    if (n == 8 && memcmp(p + w, &h, 8) == 0)
      continue;
    for (size_t k = 0; k < n; k++)
      if (p[w + k] != (unsigned char)(h >> (8 * k))) {
        if (wrong++ == 0)
          *first = w + k;
      }
  }
  return wrong;
}

size_t td_count_wrong(const void *buf, size_t bytes, uint64_t seed, int from) {
  size_t first;
  return td_scan(buf, bytes, seed, from, &first);
}

void td_check(const void *buf, size_t bytes, uint64_t seed, int from, const char *what) {
  size_t first;
  size_t wrong = td_scan(buf, bytes, seed, from, &first);
  if (wrong == 0)
    return;
  unsigned char got = ((const unsigned char *)buf)[first];
  test_fail(__FILE__, __LINE__,
            "%s: %zu of %zu bytes from rank %d wrong; the first is byte %zu (in 512 KiB chunk %zu): "
            "0x%02x, expected 0x%02x%s",
            what, wrong, bytes, from, first, first / (512u << 10), got, td_byte(seed, from, first),
            got == TD_SENTINEL ? " (the sentinel: never written)" : "");
}

void td_reset(void *buf, size_t bytes) { memset(buf, TD_SENTINEL, bytes); }

void td_check_untouched(const void *buf, size_t bytes, const char *what) {
  const unsigned char *p = buf;
  for (size_t i = 0; i < bytes; i++)
    if (p[i] != TD_SENTINEL)
      test_fail(__FILE__, __LINE__, "%s: byte %zu of %zu was written (0x%02x) but should not be",
                what, i, bytes, p[i]);
}

/* The guards' pattern: from a rank no test uses, so that no data matches it. */
enum { TD_GUARD_RANK = -7 };
static const uint64_t td_guard_seed = 0x6775617264ull;

void td_arm_guards(void *data, size_t bytes) {
  unsigned char *p = data;
  td_fill(p - TD_GUARD, TD_GUARD, td_guard_seed, TD_GUARD_RANK);
  td_fill(p + bytes, TD_GUARD, td_guard_seed + 1, TD_GUARD_RANK);
}

void td_check_guards(const void *data, size_t bytes, const char *what) {
  const unsigned char *p = data;
  size_t first;
  if (td_scan(p - TD_GUARD, TD_GUARD, td_guard_seed, TD_GUARD_RANK, &first) != 0)
    test_fail(__FILE__, __LINE__, "%s: byte %zu before the buffer's start was written", what,
              TD_GUARD - first);
  if (td_scan(p + bytes, TD_GUARD, td_guard_seed + 1, TD_GUARD_RANK, &first) != 0)
    test_fail(__FILE__, __LINE__, "%s: byte %zu after the buffer's end (of %zu bytes) was written",
              what, first, bytes);
}

td_buf_t td_buf_alloc(size_t bytes, size_t misalign) {
  td_buf_t b;
  b.mem = malloc(bytes + 2 * TD_GUARD + 128);
  TEST_ASSERT(b.mem != NULL, "no memory for %zu bytes", bytes);
  b.data = b.mem + (64 - (uintptr_t)b.mem % 64) % 64 + TD_GUARD + misalign % 64;
  b.bytes = bytes;
  td_arm_guards(b.data, bytes);
  td_reset(b.data, bytes);
  return b;
}

void td_buf_free(td_buf_t *b) {
  free(b->mem);
  b->mem = b->data = NULL;
}

/* ---- typed values */

size_t td_dtype_size(symcomm_dtype_t t) {
  size_t s = 0;
  TEST_OK(symcomm_dtype_size(t, &s));
  return s;
}

int td_dtype_signed(symcomm_dtype_t t) {
  return t == SYMCOMM_INT8 || t == SYMCOMM_INT32 || t == SYMCOMM_INT64;
}

int td_dtype_float(symcomm_dtype_t t) {
  return t == SYMCOMM_FLOAT16 || t == SYMCOMM_BFLOAT16 || t == SYMCOMM_FLOAT32 ||
         t == SYMCOMM_FLOAT64;
}

/* td_small_value from its hash: PROD's values or the others'. */
static inline int64_t td_small(uint64_t h, int prod, int has_sign) {
  if (prod) {
    int64_t v = (h & 7) == 0 ? 2 : 1;
    return has_sign && ((h >> 3) & 7) == 0 ? -v : v;
  }
  int64_t v = (int64_t)(h % 9);
  return has_sign ? v - 4 : v;
}

int64_t td_small_value(uint64_t seed, int rank, uint64_t i, symcomm_op_t op, symcomm_dtype_t t) {
  return td_small(td_hash(seed, rank, i), op == SYMCOMM_PROD, td_dtype_signed(t) || td_dtype_float(t));
}

void td_fill_small(void *buf, size_t count, symcomm_dtype_t t, symcomm_op_t op, uint64_t seed,
                   int rank, uint64_t first) {
  int prod = op == SYMCOMM_PROD, has_sign = td_dtype_signed(t) || td_dtype_float(t);
  for (size_t i = 0; i < count; i++)
    td_store(buf, t, i, (double)td_small(td_hash(seed, rank, first + i), prod, has_sign));
}

/* f rounded to `bits` significant bits, to nearest even (the default rounding
 * mode), as (significand, exponent) with f = sig * 2^exp, sig in [2^(bits-1), 2^bits). */
static void td_round_float(float f, int bits, double *sig, int *exp) {
  int e;
  double m = frexp(fabs((double)f), &e); /* [0.5, 1) */
  double r = rint(ldexp(m, bits));
  if (r == ldexp(1.0, bits)) { /* rounded up to the next power of two */
    r = ldexp(1.0, bits - 1);
    e++;
  }
  *sig = r;
  *exp = e - bits;
}

uint16_t td_float_to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t e = (u >> 23) & 0xffu;
  if ((u & 0x1fffu) == 0 && e >= 113 && e <= 142) /* a normal binary16 exactly: no rounding */
    return (uint16_t)((u >> 16 & 0x8000u) | (e - 112) << 10 | (u >> 13 & 0x3ffu));
  uint16_t sign = signbit(f) ? 0x8000u : 0;
  TEST_ASSERT(!isnan(f));
  if (f == 0)
    return sign;
  if (isinf(f))
    return sign | 0x7c00u;
  double sig;
  int exp;
  td_round_float(f, 11, &sig, &exp);
  int biased = exp + 10 + 15; /* the value is sig * 2^exp = 1.m * 2^(exp + 10) */
  if (biased >= 31)
    return sign | 0x7c00u;
  TEST_ASSERT(biased >= 1, "%g is below binary16's normal numbers", (double)f);
  return (uint16_t)(sign | (unsigned)biased << 10 | ((unsigned)sig - 1024u));
}

uint16_t td_float_to_bf16(float f) {
  TEST_ASSERT(!isnan(f));
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0xffffu) == 0 || isinf(f)) /* exact */
    return (uint16_t)(u >> 16);
  double sig;
  int exp;
  td_round_float(f, 8, &sig, &exp);
  float r = (float)ldexp(signbit(f) ? -sig : sig, exp); /* exact: 8 bits, in float's range */
  memcpy(&u, &r, 4);
  return (uint16_t)(u >> 16);
}

void td_store(void *buf, symcomm_dtype_t t, size_t i, double v) {
  switch (t) {
  case SYMCOMM_INT8: ((int8_t *)buf)[i] = (int8_t)(int64_t)v; break;
  case SYMCOMM_UINT8: ((uint8_t *)buf)[i] = (uint8_t)(int64_t)v; break;
  case SYMCOMM_INT32: ((int32_t *)buf)[i] = (int32_t)(int64_t)v; break;
  case SYMCOMM_UINT32: ((uint32_t *)buf)[i] = (uint32_t)(int64_t)v; break;
  case SYMCOMM_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
  case SYMCOMM_UINT64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
  case SYMCOMM_FLOAT16: ((uint16_t *)buf)[i] = td_float_to_half((float)v); break;
  case SYMCOMM_BFLOAT16: ((uint16_t *)buf)[i] = td_float_to_bf16((float)v); break;
  case SYMCOMM_FLOAT32: ((float *)buf)[i] = (float)v; break;
  case SYMCOMM_FLOAT64: ((double *)buf)[i] = v; break;
  default: TEST_ASSERT(0, "unknown dtype %d", (int)t);
  }
}

/* Integers: the wrapped sum or product (lo/hi: the minimum and maximum),
 * then the element's width (two's complement), then AVG's C division in the
 * type symcomm divides in. */
static void td_finish_int(void *out, symcomm_dtype_t t, symcomm_op_t op, uint64_t acc, int64_t lo,
                          int64_t hi, int n) {
  if (op == SYMCOMM_MIN || op == SYMCOMM_MAX) {
    td_store(out, t, 0, (double)(op == SYMCOMM_MIN ? lo : hi));
    return;
  }
  int avg = op == SYMCOMM_AVG;
  switch (t) {
  case SYMCOMM_INT8: *(int8_t *)out = (int8_t)(avg ? (int)(int8_t)acc / n : (int8_t)acc); break;
  case SYMCOMM_UINT8: *(uint8_t *)out = (uint8_t)(avg ? (int)(uint8_t)acc / n : (uint8_t)acc); break;
  case SYMCOMM_INT32: *(int32_t *)out = avg ? (int32_t)acc / n : (int32_t)acc; break;
  case SYMCOMM_UINT32: *(uint32_t *)out = avg ? (uint32_t)acc / (uint32_t)n : (uint32_t)acc; break;
  case SYMCOMM_INT64: *(int64_t *)out = avg ? (int64_t)acc / n : (int64_t)acc; break;
  case SYMCOMM_UINT64: *(uint64_t *)out = avg ? acc / (uint64_t)n : acc; break;
  default: TEST_ASSERT(0, "not an integer type: %d", (int)t);
  }
}

/* Floats: the inputs are small integers, so every partial result is exact in
 * double and products stay powers of two: one double accumulator stands for
 * any order. AVG divides in the accumulator's type (float but for fp64). */
static void td_finish_float(void *out, symcomm_dtype_t t, symcomm_op_t op, double acc, int n) {
  if (op == SYMCOMM_AVG)
    acc = t == SYMCOMM_FLOAT64 ? acc / n : (double)((float)acc / (float)n);
  td_store(out, t, 0, acc);
}

void td_check_reduced(const void *buf, size_t count, symcomm_dtype_t t, symcomm_op_t op,
                      uint64_t seed, uint64_t first, int nranks, const char *what) {
  enum { BLOCK = 1024 }; /* elements reduced at a time, ranks in the outer loop */
  uint64_t acc[BLOCK];
  int64_t lo[BLOCK], hi[BLOCK];
  double facc[BLOCK];
  size_t sz = td_dtype_size(t);
  int is_float = td_dtype_float(t), prod = op == SYMCOMM_PROD;
  int has_sign = is_float || td_dtype_signed(t);
  for (size_t base = 0; base < count; base += BLOCK) {
    size_t m = count - base < BLOCK ? count - base : BLOCK;
    for (int r = 0; r < nranks; r++)
      for (size_t i = 0; i < m; i++) {
        int64_t v = td_small(td_hash(seed, r, first + base + i), prod, has_sign);
        if (r == 0) {
          acc[i] = (uint64_t)v;
          lo[i] = hi[i] = v;
          facc[i] = (double)v;
          continue;
        }
        acc[i] = op == SYMCOMM_PROD ? acc[i] * (uint64_t)v : acc[i] + (uint64_t)v;
        lo[i] = v < lo[i] ? v : lo[i];
        hi[i] = v > hi[i] ? v : hi[i];
        facc[i] = op == SYMCOMM_PROD ? facc[i] * (double)v : facc[i] + (double)v;
      }
    for (size_t i = 0; i < m; i++) {
      uint64_t want = 0, got = 0;
      if (!is_float)
        td_finish_int(&want, t, op, acc[i], lo[i], hi[i], nranks);
      else if (op == SYMCOMM_MIN || op == SYMCOMM_MAX)
        td_finish_float(&want, t, op, (double)(op == SYMCOMM_MIN ? lo[i] : hi[i]), nranks);
      else
        td_finish_float(&want, t, op, facc[i], nranks);
      memcpy(&got, (const char *)buf + (base + i) * sz, sz);
      if (got != want)
        test_fail(__FILE__, __LINE__,
                  "%s: element %zu of %zu is wrong: bits 0x%llx, expected 0x%llx%s", what,
                  base + i, count, (unsigned long long)got, (unsigned long long)want,
                  got == (0x0101010101010101ull * TD_SENTINEL >> (64 - 8 * sz))
                      ? " (the sentinel: never written)"
                      : "");
    }
  }
}

void td_fill_elems(void *buf, size_t count, symcomm_dtype_t t, uint64_t seed, int rank,
                   uint64_t first) {
  size_t sz = td_dtype_size(t);
  for (size_t i = 0; i < count; i++) {
    uint64_t h = td_hash(seed, rank, first + i);
    memcpy((char *)buf + i * sz, &h, sz);
  }
}

void td_check_elems(const void *buf, size_t count, symcomm_dtype_t t, uint64_t seed, int rank,
                    uint64_t first, const char *what) {
  size_t sz = td_dtype_size(t), wrong = 0, first_wrong = 0;
  uint64_t mask = sz == 8 ? ~0ull : (1ull << (8 * sz)) - 1;
  for (size_t i = 0; i < count; i++) {
    uint64_t h = td_hash(seed, rank, first + i) & mask, got = 0;
    memcpy(&got, (const char *)buf + i * sz, sz);
    if (got != h && wrong++ == 0)
      first_wrong = i;
  }
  if (wrong == 0)
    return;
  uint64_t got = 0, exp = td_mix(seed, rank, first + first_wrong);
  memcpy(&got, (const char *)buf + first_wrong * sz, sz);
  if (sz < 8)
    exp &= (1ull << (8 * sz)) - 1;
  test_fail(__FILE__, __LINE__,
            "%s: %zu of %zu elements from rank %d wrong; the first is element %zu: 0x%llx, expected "
            "0x%llx",
            what, wrong, count, rank, first_wrong, (unsigned long long)got, (unsigned long long)exp);
}
