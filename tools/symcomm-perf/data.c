/* Inputs, expected results and comparison, per dtype.
 *
 * Reductions get small integers, so that every partial result is exact in
 * every dtype and the answer does not depend on the order in which ranks are
 * combined: SUM, MIN, MAX and AVG take values in [-a, a] ([0, 2a] unsigned),
 * a = 4 up to 64 ranks (|any partial sum| <= 256, exact even in bfloat16),
 * 2 up to 128 and 1 beyond; PROD takes 1 or 2, with a sign for signed types,
 * so products are powers of two. The expected value is computed exactly and
 * finished the way symcomm documents it (src/device/reduce.h): integers wrap,
 * AVG divides the sum once (integers with C division, toward zero; float16 and
 * bfloat16 in float, then rounded once to nearest even). Operations that only
 * move data get random bit patterns (NaNs included), which catches a byte out
 * of place better than small integers do. Results compare bit for bit. */
#include <string.h>

#include "../common/float16.h"
#include "perf.h"

static uint64_t mix(uint64_t seed, int rank, size_t i) {
  uint64_t z =
      seed * 0x9e3779b97f4a7c15ull + (uint64_t)(unsigned)rank * 0xd1b54a32d192ed03ull + (uint64_t)i;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int is_unsigned(symcomm_dtype_t dtype) {
  return dtype == SYMCOMM_UINT8 || dtype == SYMCOMM_UINT32 || dtype == SYMCOMM_UINT64;
}

static int is_float(symcomm_dtype_t dtype) {
  return dtype == SYMCOMM_FLOAT16 || dtype == SYMCOMM_BFLOAT16 || dtype == SYMCOMM_FLOAT32 ||
         dtype == SYMCOMM_FLOAT64;
}

size_t perf_dtype_size(symcomm_dtype_t dtype) {
  size_t size = 0;
  symcomm_dtype_size(dtype, &size);
  return size;
}

static long long small_value(symcomm_dtype_t dtype, symcomm_op_t op, uint64_t seed, int rank,
                             size_t i, int nranks) {
  uint64_t h = mix(seed, rank, i);
  if (op == SYMCOMM_PROD) {
    long long v = (h & 7) == 0 ? 2 : 1;
    return !is_unsigned(dtype) && ((h >> 3) & 7) == 0 ? -v : v;
  }
  long long a = nranks <= 64 ? 4 : nranks <= 128 ? 2 : 1;
  long long v = (long long)(h % (uint64_t)(2 * a + 1));
  return is_unsigned(dtype) ? v : v - a;
}

/* v fits every dtype here (inputs, MIN/MAX results); out-of-range integers wrap. */
static void store_int(void *buf, size_t j, symcomm_dtype_t dtype, long long v) {
  switch (dtype) {
  case SYMCOMM_INT8:
    ((int8_t *)buf)[j] = (int8_t)v;
    break;
  case SYMCOMM_UINT8:
    ((uint8_t *)buf)[j] = (uint8_t)v;
    break;
  case SYMCOMM_INT32:
    ((int32_t *)buf)[j] = (int32_t)v;
    break;
  case SYMCOMM_UINT32:
    ((uint32_t *)buf)[j] = (uint32_t)v;
    break;
  case SYMCOMM_INT64:
    ((int64_t *)buf)[j] = (int64_t)v;
    break;
  case SYMCOMM_UINT64:
    ((uint64_t *)buf)[j] = (uint64_t)v;
    break;
  case SYMCOMM_FLOAT16:
    ((uint16_t *)buf)[j] = float16_from_float((float)v);
    break;
  case SYMCOMM_BFLOAT16:
    ((uint16_t *)buf)[j] = bfloat16_from_float((float)v);
    break;
  case SYMCOMM_FLOAT32:
    ((float *)buf)[j] = (float)v;
    break;
  case SYMCOMM_FLOAT64:
    ((double *)buf)[j] = (double)v;
    break;
  default:
    break;
  }
}

void perf_data_input(void *buf, symcomm_dtype_t dtype, int op, uint64_t seed, int rank,
                     size_t first, size_t n, int nranks) {
  if (op < 0) {
    size_t elem = perf_dtype_size(dtype);
    for (size_t j = 0; j < n; j++) {
      uint64_t h = mix(seed, rank, first + j);
      memcpy((char *)buf + j * elem, &h, elem);
    }
    return;
  }
  for (size_t j = 0; j < n; j++)
    store_int(buf, j, dtype, small_value(dtype, (symcomm_op_t)op, seed, rank, first + j, nranks));
}

/* SUM, PROD or AVG of integers: the wrapped sum or product, then AVG's C
 * division in the type symcomm divides in (int for 8-bit types). */
static void finish_int(void *buf, size_t j, symcomm_dtype_t dtype, symcomm_op_t op, uint64_t acc,
                       int nranks) {
  int avg = op == SYMCOMM_AVG;
  switch (dtype) {
  case SYMCOMM_INT8: {
    int8_t t = (int8_t)acc;
    ((int8_t *)buf)[j] = avg ? (int8_t)((int)t / nranks) : t;
    break;
  }
  case SYMCOMM_UINT8: {
    uint8_t t = (uint8_t)acc;
    ((uint8_t *)buf)[j] = avg ? (uint8_t)((int)t / nranks) : t;
    break;
  }
  case SYMCOMM_INT32: {
    int32_t t = (int32_t)(uint32_t)acc;
    ((int32_t *)buf)[j] = avg ? t / (int32_t)nranks : t;
    break;
  }
  case SYMCOMM_UINT32: {
    uint32_t t = (uint32_t)acc;
    ((uint32_t *)buf)[j] = avg ? t / (uint32_t)nranks : t;
    break;
  }
  case SYMCOMM_INT64: {
    int64_t t = (int64_t)acc;
    ((int64_t *)buf)[j] = avg ? t / (int64_t)nranks : t;
    break;
  }
  case SYMCOMM_UINT64:
    ((uint64_t *)buf)[j] = avg ? acc / (uint64_t)nranks : acc;
    break;
  default:
    break;
  }
}

/* Floats: acc is exact (small integers, powers of two); AVG divides in the
 * type symcomm accumulates in, and 16-bit types round once at the end. */
static void finish_float(void *buf, size_t j, symcomm_dtype_t dtype, symcomm_op_t op, double acc,
                         int nranks) {
  int avg = op == SYMCOMM_AVG;
  if (dtype == SYMCOMM_FLOAT64) {
    ((double *)buf)[j] = avg ? acc / (double)nranks : acc;
    return;
  }
  float f = avg ? (float)acc / (float)nranks : (float)acc;
  if (dtype == SYMCOMM_FLOAT32)
    ((float *)buf)[j] = f;
  else if (dtype == SYMCOMM_FLOAT16)
    ((uint16_t *)buf)[j] = float16_from_float(f);
  else
    ((uint16_t *)buf)[j] = bfloat16_from_float(f);
}

void perf_data_reduced(void *buf, symcomm_dtype_t dtype, symcomm_op_t op, uint64_t seed,
                       size_t first, size_t n, int nranks) {
  int fl = is_float(dtype);
  for (size_t j = 0; j < n; j++) {
    size_t i = first + j;
    long long v0 = small_value(dtype, op, seed, 0, i, nranks);
    if (op == SYMCOMM_MIN || op == SYMCOMM_MAX) {
      long long m = v0;
      for (int r = 1; r < nranks; r++) {
        long long v = small_value(dtype, op, seed, r, i, nranks);
        m = op == SYMCOMM_MIN ? (v < m ? v : m) : (v > m ? v : m);
      }
      store_int(buf, j, dtype, m);
    } else if (fl) {
      double acc = (double)v0;
      for (int r = 1; r < nranks; r++) {
        double v = (double)small_value(dtype, op, seed, r, i, nranks);
        acc = op == SYMCOMM_PROD ? acc * v : acc + v;
      }
      finish_float(buf, j, dtype, op, acc, nranks);
    } else {
      uint64_t acc = (uint64_t)v0;
      for (int r = 1; r < nranks; r++) {
        uint64_t v = (uint64_t)small_value(dtype, op, seed, r, i, nranks);
        acc = op == SYMCOMM_PROD ? acc * v : acc + v;
      }
      finish_int(buf, j, dtype, op, acc, nranks);
    }
  }
}

size_t perf_data_compare(const void *got, const void *want, size_t elem, size_t n) {
  if (memcmp(got, want, elem * n) == 0)
    return 0;
  size_t wrong = 0;
  for (size_t j = 0; j < n; j++)
    wrong += memcmp((const char *)got + j * elem, (const char *)want + j * elem, elem) != 0;
  return wrong;
}

void perf_data_poison(void *buf, size_t bytes) { memset(buf, 0xa5, bytes); }

int perf_dtype_from_name(const char *name) {
  static const struct {
    const char *alias;
    symcomm_dtype_t dtype;
  } aliases[] = {
      {"char", SYMCOMM_INT8},    {"int", SYMCOMM_INT32},      {"half", SYMCOMM_FLOAT16},
      {"fp16", SYMCOMM_FLOAT16}, {"bf16", SYMCOMM_BFLOAT16},  {"float", SYMCOMM_FLOAT32},
      {"fp32", SYMCOMM_FLOAT32}, {"double", SYMCOMM_FLOAT64}, {"fp64", SYMCOMM_FLOAT64},
  };
  for (int d = 0; d < SYMCOMM_DTYPE_COUNT; d++)
    if (strcmp(name, symcomm_dtype_string((symcomm_dtype_t)d)) == 0)
      return d;
  for (size_t k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
    if (strcmp(name, aliases[k].alias) == 0)
      return (int)aliases[k].dtype;
  return -1;
}

int perf_redop_from_name(const char *name) {
  for (int op = 0; op < SYMCOMM_OP_COUNT; op++)
    if (strcmp(name, symcomm_op_string((symcomm_op_t)op)) == 0)
      return op;
  return -1;
}
