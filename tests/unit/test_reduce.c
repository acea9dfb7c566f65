/* The reductions of the collective program (src/device/reduce.h) and the
 * fp16/bf16 conversions (src/device/reduce_types.h): every dtype x op against
 * a plain reference, bit for bit, with inputs whose results are exact, run as
 * one thread and as several threads of a device block (each thread's share
 * run in turn: together they must cover every element once), and the LL
 * protocol's line of 8 bytes a source (sc_dev_reduce_line). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* A device block of `threads` threads, one of which runs at a time. */
typedef struct {
  uint32_t thread, threads;
} sc_dev_ctx_t;

static inline uint32_t sc_dev_thread(const sc_dev_ctx_t *ctx) { return ctx->thread; }
static inline uint32_t sc_dev_threads(const sc_dev_ctx_t *ctx) { return ctx->threads; }

#include "device/reduce.h"

/* A reduction described whole. */
typedef struct {
  void *dst;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  int nsrcs;
  size_t count;
  int dtype;
  int op;
  int avg_divisor;
} test_reduce_case_t;

static uint32_t threads = 1; /* of the block that runs the reductions */

#define MAX_COUNT 1000

static const char *const dtype_names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                          "uint64", "float16", "bfloat16", "float32", "float64"};
static const char *const op_names[] = {"sum", "prod", "min", "max", "avg"};

static size_t dtype_bytes(int dtype) {
  static const size_t bytes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return bytes[dtype];
}

static int dtype_is_int(int dtype) { return dtype <= SYMCOMM_UINT64; }
static int dtype_is_signed_int(int dtype) {
  return dtype == SYMCOMM_INT8 || dtype == SYMCOMM_INT32 || dtype == SYMCOMM_INT64;
}

/* The raw bytes of element i, zero-extended. */
static uint64_t get_bits(int dtype, const void *buf, size_t i) {
  uint64_t v = 0;
  memcpy(&v, (const char *)buf + i * dtype_bytes(dtype), dtype_bytes(dtype));
  return v;
}

static void put_bits(int dtype, void *buf, size_t i, uint64_t v) {
  memcpy((char *)buf + i * dtype_bytes(dtype), &v, dtype_bytes(dtype));
}

static uint64_t float_bits64(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The bits of value v (exactly representable) in dtype. */
static uint64_t encode(int dtype, double v) {
  switch (dtype) {
  case SYMCOMM_FLOAT16: return sc_float_to_fp16((float)v);
  case SYMCOMM_BFLOAT16: return sc_float_to_bf16((float)v);
  case SYMCOMM_FLOAT32: return float_bits64((float)v);
  case SYMCOMM_FLOAT64: return double_bits(v);
  default: {
    uint64_t u = (uint64_t)(int64_t)v;
    size_t bits = dtype_bytes(dtype) * 8;
    return bits == 64 ? u : u & ((1ull << bits) - 1);
  }
  }
}

/* w mod 2^bits as a signed number. */
static int64_t sign_extend(uint64_t w, int bits) {
  if (bits == 64)
    return (int64_t)w;
  uint64_t m = 1ull << (bits - 1);
  w &= (1ull << bits) - 1;
  return (int64_t)(w ^ m) - (int64_t)m;
}

/* Input k, element i: small integers, so sums are exact in every dtype
 * (|sum| <= 16 * 10); float PROD gets factors +-2, +-1, 0.5 so that products
 * are powers of two (exact; fp16 may overflow to infinity or go subnormal,
 * identically in the reference). */
static double input(int dtype, int op, int k, size_t i) {
  int v = (int)((i * 7 + (size_t)k * 3) % 11);
  if (!dtype_is_int(dtype) && op == SYMCOMM_PROD) {
    static const double factors[5] = {-2, -1, 0.5, 1, 2};
    return factors[v % 5];
  }
  if (dtype == SYMCOMM_UINT8 || dtype == SYMCOMM_UINT32 || dtype == SYMCOMM_UINT64)
    return v;
  return v - 5;
}

/* The reference result for element values x[0..nsrcs), as bits of dtype. */
static uint64_t reference(int dtype, int op, int nsrcs, int divisor, const double *x) {
  if (dtype_is_int(dtype)) {
    int bits = (int)dtype_bytes(dtype) * 8;
    if (op == SYMCOMM_MIN || op == SYMCOMM_MAX) {
      double r = x[0];
      for (int k = 1; k < nsrcs; k++)
        r = op == SYMCOMM_MIN ? fmin(r, x[k]) : fmax(r, x[k]);
      return encode(dtype, r);
    }
    uint64_t w = (uint64_t)(int64_t)x[0];
    for (int k = 1; k < nsrcs; k++)
      w = op == SYMCOMM_PROD ? w * (uint64_t)(int64_t)x[k] : w + (uint64_t)(int64_t)x[k];
    if (op == SYMCOMM_AVG) {
      if (dtype_is_signed_int(dtype))
        w = (uint64_t)(sign_extend(w, bits) / divisor);
      else
        w = (bits == 64 ? w : w & ((1ull << bits) - 1)) / (uint64_t)divisor;
    }
    return bits == 64 ? w : w & ((1ull << bits) - 1);
  }
  double r = x[0]; /* exact: small integers or powers of two */
  for (int k = 1; k < nsrcs; k++) {
    switch (op) {
    case SYMCOMM_PROD: r *= x[k]; break;
    case SYMCOMM_MIN: r = fmin(r, x[k]); break;
    case SYMCOMM_MAX: r = fmax(r, x[k]); break;
    default: r += x[k]; break;
    }
  }
  if (dtype == SYMCOMM_FLOAT64)
    return double_bits(op == SYMCOMM_AVG ? r / divisor : r);
  float f = op == SYMCOMM_AVG ? (float)r / (float)divisor : (float)r;
  if (dtype == SYMCOMM_FLOAT16)
    return sc_float_to_fp16(f);
  if (dtype == SYMCOMM_BFLOAT16)
    return sc_float_to_bf16(f);
  return float_bits64(f);
}

static void run_ok(test_reduce_case_t *a) {
  TEST_ASSERT(sc_dev_reduce_ok(a->nsrcs, a->dtype, a->op, a->avg_divisor), "%s %s nsrcs %d refused",
              dtype_names[a->dtype], op_names[a->op], a->nsrcs);
  sc_dev_ctx_t ctx = {0, threads};
  for (ctx.thread = 0; ctx.thread < threads; ctx.thread++)
    sc_dev_reduce(&ctx, a->dst, a->srcs, a->nsrcs, a->count, a->dtype, a->op, a->avg_divisor);
}

static void *bufs[SC_MAX_LOCAL_RANKS + 1]; /* sources, then dst */

/* Fills the sources of dtype x op, runs the program into dst (or in place
 * into srcs[inplace] when inplace >= 0), and checks every element. */
static void check_case(int dtype, int op, int nsrcs, size_t count, int divisor, int inplace) {
  for (int k = 0; k < nsrcs; k++)
    for (size_t i = 0; i < count; i++)
      put_bits(dtype, bufs[k], i, encode(dtype, input(dtype, op, k, i)));
  void *dst = inplace >= 0 ? bufs[inplace] : bufs[SC_MAX_LOCAL_RANKS];
  if (inplace < 0)
    memset(dst, 0xee, MAX_COUNT * 8 + 8);
  test_reduce_case_t a;
  memset(&a, 0, sizeof a);
  a.dst = dst;
  for (int k = 0; k < nsrcs; k++)
    a.srcs[k] = bufs[k];
  a.nsrcs = nsrcs;
  a.count = count;
  a.dtype = dtype;
  a.op = op;
  a.avg_divisor = divisor;
  run_ok(&a);
  for (size_t i = 0; i < count; i++) {
    double x[SC_MAX_LOCAL_RANKS];
    for (int k = 0; k < nsrcs; k++)
      x[k] = input(dtype, op, k, i);
    uint64_t want = reference(dtype, op, nsrcs, divisor, x);
    uint64_t got = get_bits(dtype, dst, i);
    TEST_ASSERT(
        got == want,
        "%s %s nsrcs %d count %zu divisor %d inplace %d: element %zu is 0x%llx, want 0x%llx",
        dtype_names[dtype], op_names[op], nsrcs, count, divisor, inplace, i,
        (unsigned long long)got, (unsigned long long)want);
  }
  if (inplace < 0) /* nothing past count */
    for (size_t b = count * dtype_bytes(dtype); b < MAX_COUNT * 8 + 8; b++)
      TEST_ASSERT(((unsigned char *)dst)[b] == 0xee, "%s %s count %zu: byte %zu written",
                  dtype_names[dtype], op_names[op], count, b);
}

static void test_matrix(void) {
  static const int nsrcs_list[] = {1, 2, 3, 8, 16};
  static const size_t counts[] = {0, 1, 7, 256, 1000};
  int cases = 0;
  for (int dtype = 0; dtype < SYMCOMM_DTYPE_COUNT; dtype++)
    for (int op = 0; op < SYMCOMM_OP_COUNT; op++)
      for (size_t n = 0; n < sizeof nsrcs_list / sizeof nsrcs_list[0]; n++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
          int nsrcs = nsrcs_list[n];
          /* AVG of one source still divides */
          check_case(dtype, op, nsrcs, counts[c], nsrcs == 1 ? 2 : nsrcs, -1);
          cases++;
        }
  /* in place: dst is the first source, or the third */
  for (int dtype = 0; dtype < SYMCOMM_DTYPE_COUNT; dtype++)
    for (int op = 0; op < SYMCOMM_OP_COUNT; op++) {
      check_case(dtype, op, 3, MAX_COUNT, 3, 0);
      check_case(dtype, op, 3, MAX_COUNT, 3, 2);
      check_case(dtype, op, 16, MAX_COUNT, 16, 2);
      check_case(dtype, op, 1, 7, 2, 0);
      cases += 4;
    }
  printf("matrix: %d cases with %u thread%s\n", cases, threads, threads == 1 ? "" : "s");
}

/* ---- specific values */

/* Reduces two (or three) elements of the given bits and returns the bits. */
static uint64_t reduce3(int dtype, int op, int nsrcs, int divisor, uint64_t x0, uint64_t x1,
                        uint64_t x2) {
  uint64_t s[3] = {0, 0, 0}, d = 0;
  put_bits(dtype, &s[0], 0, x0);
  put_bits(dtype, &s[1], 0, x1);
  put_bits(dtype, &s[2], 0, x2);
  test_reduce_case_t a;
  memset(&a, 0, sizeof a);
  a.dst = &d;
  for (int k = 0; k < 3; k++)
    a.srcs[k] = &s[k];
  a.nsrcs = nsrcs;
  a.count = 1;
  a.dtype = dtype;
  a.op = op;
  a.avg_divisor = divisor;
  run_ok(&a);
  return d;
}

#define RED2(dtype, op, x, y) reduce3(dtype, op, 2, 2, (uint64_t)(x), (uint64_t)(y), 0)

static void test_integer_edges(void) {
  /* wrap-around: SUM and PROD modulo 2^bits */
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_SUM, 100, 100) == 0xc8);   /* -56 */
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_SUM, 0x80, 0xff) == 0x7f); /* -128 + -1 = 127 */
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_SUM, 200, 100) == 44);
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_PROD, 16, 16) == 0);
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_PROD, 0x80, 0xff) == 0x80); /* -128 * -1 = -128 */
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_PROD, 100, 3) == 0x2c);     /* 300 - 256 = 44 */
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_PROD, 16, 17) == 16);
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_PROD, 255, 255) == 1);
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_SUM, INT32_MAX, 1) == 0x80000000u);
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_PROD, 0x80000000u, 0xffffffffu) == 0x80000000u);
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_PROD, 65536, 65536) == 0);
  TEST_ASSERT(RED2(SYMCOMM_UINT32, SYMCOMM_SUM, UINT32_MAX, 2) == 1);
  TEST_ASSERT(RED2(SYMCOMM_UINT32, SYMCOMM_PROD, 0x10001u, 0x10001u) == 0x20001u);
  TEST_ASSERT(RED2(SYMCOMM_INT64, SYMCOMM_SUM, INT64_MAX, 1) == 0x8000000000000000ull);
  TEST_ASSERT(RED2(SYMCOMM_INT64, SYMCOMM_PROD, INT64_MIN, -1) == 0x8000000000000000ull);
  TEST_ASSERT(RED2(SYMCOMM_INT64, SYMCOMM_PROD, 1ull << 32, 1ull << 32) == 0);
  TEST_ASSERT(RED2(SYMCOMM_UINT64, SYMCOMM_SUM, UINT64_MAX, 1) == 0);
  TEST_ASSERT(RED2(SYMCOMM_UINT64, SYMCOMM_PROD, UINT64_MAX, UINT64_MAX) == 1);

  /* MIN/MAX compare signed types as signed, unsigned as unsigned */
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_MIN, 0x80, 0x7f) == 0x80);
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_MAX, 0x80, 0x7f) == 0x7f);
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_MIN, 0x80, 0x7f) == 0x7f);
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_MAX, 0x80, 0x7f) == 0x80);
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_MIN, 0x80000000u, 5) == 0x80000000u);
  TEST_ASSERT(RED2(SYMCOMM_UINT32, SYMCOMM_MAX, 0x80000000u, 5) == 0x80000000u);
  TEST_ASSERT(RED2(SYMCOMM_INT64, SYMCOMM_MIN, INT64_MIN, INT64_MAX) == (uint64_t)INT64_MIN);
  TEST_ASSERT(RED2(SYMCOMM_UINT64, SYMCOMM_MIN, UINT64_MAX, 0) == 0);

  /* AVG: the wrapped sum, then C division (toward zero) */
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_AVG, -3, -4) == (uint32_t)-3); /* -7 / 2 */
  TEST_ASSERT(RED2(SYMCOMM_INT64, SYMCOMM_AVG, -3, -4) == (uint64_t)-3);
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_AVG, 0xfd, 0xfc) == 0xfd);
  TEST_ASSERT(RED2(SYMCOMM_INT32, SYMCOMM_AVG, 3, 4) == 3);
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_AVG, 3, 4) == 3);
  TEST_ASSERT(RED2(SYMCOMM_INT8, SYMCOMM_AVG, 100, 100) == 0xe4); /* -56 / 2 = -28 */
  TEST_ASSERT(RED2(SYMCOMM_UINT8, SYMCOMM_AVG, 200, 100) == 22);  /* 44 / 2 */
  TEST_ASSERT(RED2(SYMCOMM_UINT32, SYMCOMM_AVG, 0xfffffffeu, 0) == 0x7fffffffu);
  TEST_ASSERT(RED2(SYMCOMM_UINT64, SYMCOMM_AVG, UINT64_MAX, 0) == UINT64_MAX / 2);
  TEST_ASSERT(reduce3(SYMCOMM_INT8, SYMCOMM_AVG, 3, 3, 0xfe, 0xfe, 0xfd) == 0xfe); /* -7/3 = -2 */
  TEST_ASSERT(reduce3(SYMCOMM_INT32, SYMCOMM_AVG, 1, 2, (uint32_t)-7, 0, 0) == (uint32_t)-3);
  TEST_ASSERT(reduce3(SYMCOMM_UINT32, SYMCOMM_AVG, 1, 200, 0xffffffffu, 0, 0) == 0xffffffffu / 200);
  TEST_ASSERT(reduce3(SYMCOMM_INT8, SYMCOMM_AVG, 1, 200, 100, 0, 0) == 0); /* divisor past int8 */
  TEST_ASSERT(reduce3(SYMCOMM_UINT8, SYMCOMM_AVG, 1, 200, 250, 0, 0) == 1);
  TEST_ASSERT(reduce3(SYMCOMM_INT64, SYMCOMM_AVG, 1, 1, (uint64_t)INT64_MIN, 0, 0) ==
              (uint64_t)INT64_MIN);
}

#define F32(x) float_bits64(x)
#define F64(x) double_bits(x)

static int is_nan_bits(int dtype, uint64_t b) {
  switch (dtype) {
  case SYMCOMM_FLOAT16: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
  case SYMCOMM_BFLOAT16: return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
  case SYMCOMM_FLOAT32: return isnan(bits_to_float((uint32_t)b));
  default: {
    double d;
    memcpy(&d, &b, 8);
    return isnan(d);
  }
  }
}

static void test_float_edges(void) {
  static const int fdtypes[] = {SYMCOMM_FLOAT16, SYMCOMM_BFLOAT16, SYMCOMM_FLOAT32,
                                SYMCOMM_FLOAT64};
  for (size_t t = 0; t < 4; t++) {
    int dt = fdtypes[t];
    uint64_t nan = dt == SYMCOMM_FLOAT64   ? F64(NAN)
                   : dt == SYMCOMM_FLOAT32 ? F32(NAN)
                   : dt == SYMCOMM_FLOAT16 ? 0x7e00
                                           : 0x7fc0;
    uint64_t one = encode(dt, 1), two = encode(dt, 2), m3 = encode(dt, -3);
    uint64_t pz = encode(dt, 0.0), nz = encode(dt, -0.0);
    uint64_t inf = dt == SYMCOMM_FLOAT64   ? F64(INFINITY)
                   : dt == SYMCOMM_FLOAT32 ? F32(INFINITY)
                   : dt == SYMCOMM_FLOAT16 ? 0x7c00
                                           : 0x7f80;
    TEST_ASSERT(nz != pz);
    /* MIN/MAX: a NaN anywhere gives NaN */
    for (int op = SYMCOMM_MIN; op <= SYMCOMM_MAX; op++) {
      const char *name = dtype_names[dt];
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 3, 1, nan, one, two)), "%s", name);
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 3, 1, one, nan, two)), "%s", name);
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 3, 1, one, two, nan)), "%s", name);
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 3, 1, m3, two, nan)), "%s", name);
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 3, 1, inf, nan, m3)), "%s", name);
      TEST_ASSERT(is_nan_bits(dt, reduce3(dt, op, 1, 1, nan, 0, 0)), "%s", name);
    }
    TEST_ASSERT(reduce3(dt, SYMCOMM_MIN, 3, 1, one, m3, two) == m3);
    TEST_ASSERT(reduce3(dt, SYMCOMM_MAX, 3, 1, one, m3, two) == two);
    TEST_ASSERT(reduce3(dt, SYMCOMM_MAX, 3, 1, one, inf, two) == inf);
    /* +-0: MIN -0, MAX +0, whatever the order */
    TEST_ASSERT(RED2(dt, SYMCOMM_MIN, pz, nz) == nz, "%s", dtype_names[dt]);
    TEST_ASSERT(RED2(dt, SYMCOMM_MIN, nz, pz) == nz, "%s", dtype_names[dt]);
    TEST_ASSERT(RED2(dt, SYMCOMM_MAX, pz, nz) == pz, "%s", dtype_names[dt]);
    TEST_ASSERT(RED2(dt, SYMCOMM_MAX, nz, pz) == pz, "%s", dtype_names[dt]);
    TEST_ASSERT(RED2(dt, SYMCOMM_MIN, pz, pz) == pz && RED2(dt, SYMCOMM_MAX, nz, nz) == nz);
    TEST_ASSERT(reduce3(dt, SYMCOMM_MIN, 3, 1, pz, pz, nz) == nz);
    TEST_ASSERT(reduce3(dt, SYMCOMM_MAX, 3, 1, nz, nz, pz) == pz);
    /* SUM with NaN and infinities */
    TEST_ASSERT(is_nan_bits(dt, RED2(dt, SYMCOMM_SUM, one, nan)));
    TEST_ASSERT(is_nan_bits(dt, RED2(dt, SYMCOMM_SUM, inf, inf ^ encode(dt, -0.0))));
    TEST_ASSERT(RED2(dt, SYMCOMM_SUM, inf, m3) == inf);
    TEST_ASSERT(RED2(dt, SYMCOMM_AVG, m3, two) == encode(dt, -0.5));
  }
  /* fp16/bf16 accumulate in float and round once: 2048 + 1 + 1 is 2050 in
   * fp16 (ulp 2 there), where rounding after each step would give 2048 */
  uint64_t h2048 = sc_float_to_fp16(2048.0f), h1 = sc_float_to_fp16(1.0f);
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT16, SYMCOMM_SUM, 3, 1, h2048, h1, h1) ==
              sc_float_to_fp16(2050.0f));
  uint64_t b256 = sc_float_to_bf16(256.0f), b1 = sc_float_to_bf16(1.0f);
  TEST_ASSERT(reduce3(SYMCOMM_BFLOAT16, SYMCOMM_SUM, 3, 1, b256, b1, b1) ==
              sc_float_to_bf16(258.0f));
  /* overflow of the rounded result, not of the float accumulator */
  uint64_t h60000 = sc_float_to_fp16(60000.0f);
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_SUM, h60000, h60000) == 0x7c00);
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_AVG, h60000, h60000) == h60000);
  /* AVG divides the float before rounding: (1 + 2) / 2 in fp16 is 1.5 */
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_AVG, h1, sc_float_to_fp16(2.0f)) == 0x3e00);
  /* subnormal inputs and outputs: 2^-24 * 2^-24 * 2^24 -> 2^-24, via float */
  uint64_t tiny = 0x0001, big = sc_float_to_fp16(16777216.0f);
  TEST_ASSERT(big == 0x7c00); /* 2^24 is past fp16's range */
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT16, SYMCOMM_PROD, 3, 1, tiny, sc_float_to_fp16(1024.0f),
                      sc_float_to_fp16(2.0f)) == 0x0800); /* 2^-13 */
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_SUM, tiny, tiny) == 0x0002);
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_AVG, tiny, 0x0000) == 0x0000); /* 2^-25: tie to even */
  TEST_ASSERT(RED2(SYMCOMM_FLOAT16, SYMCOMM_AVG, 0x0003, 0x0000) ==
              0x0002); /* 1.5 ulp: tie to even */
  TEST_ASSERT(RED2(SYMCOMM_BFLOAT16, SYMCOMM_SUM, 0x0001, 0x0001) == 0x0002);
  TEST_ASSERT(RED2(SYMCOMM_BFLOAT16, SYMCOMM_MIN, 0x8001, 0x0001) == 0x8001);
  /* float32 rounds in float, float64 in double */
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT32, SYMCOMM_SUM, 3, 1, F32(16777216.0f), F32(1.0f), F32(1.0f)) ==
              F32(16777216.0f));
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT64, SYMCOMM_SUM, 3, 1, F64(16777216.0), F64(1.0), F64(1.0)) ==
              F64(16777218.0));
  TEST_ASSERT(RED2(SYMCOMM_FLOAT32, SYMCOMM_AVG, F32(1.0f), F32(0.0f)) == F32(0.5f));
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT64, SYMCOMM_AVG, 1, 3, F64(1.0), 0, 0) == F64(1.0 / 3.0));
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT32, SYMCOMM_AVG, 1, 3, F32(1.0f), 0, 0) == F32(1.0f / 3.0f));
  TEST_ASSERT(reduce3(SYMCOMM_FLOAT16, SYMCOMM_AVG, 1, 3, h1, 0, 0) ==
              sc_float_to_fp16(1.0f / 3.0f));
  TEST_ASSERT(sc_float_to_fp16(1.0f / 3.0f) == 0x3555);
}

/* ---- the conversions */

/* An fp16 value from its fields, computed independently in double. */
static double fp16_value(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

static double bf16_value(uint16_t b) {
  int s = b >> 15, e = (b >> 7) & 0xff, m = b & 0x7f;
  double v = e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
  return s ? -v : v;
}

static void test_roundtrips(void) {
  for (uint32_t i = 0; i < 65536; i++) {
    uint16_t h = (uint16_t)i;
    float f = sc_fp16_to_float(h);
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f && m != 0) {
      /* NaN stays NaN, keeping sign and payload (all of it fits in a float) */
      TEST_ASSERT(isnan(f), "fp16 0x%04x", h);
      TEST_ASSERT(sc_float_to_fp16(f) == h, "fp16 0x%04x -> 0x%04x", h, sc_float_to_fp16(f));
    } else {
      if (e == 0x1f)
        TEST_ASSERT(isinf(f) && (f < 0) == (h >> 15), "fp16 0x%04x", h);
      else
        TEST_ASSERT((double)f == fp16_value(h) && !signbit(f) == !signbit(fp16_value(h)),
                    "fp16 0x%04x -> %a, want %a", h, f, fp16_value(h));
      TEST_ASSERT(sc_float_to_fp16(f) == h, "fp16 0x%04x -> %a -> 0x%04x", h, f,
                  sc_float_to_fp16(f));
    }

    uint16_t b = (uint16_t)i;
    f = sc_bf16_to_float(b);
    e = (b >> 7) & 0xff;
    m = b & 0x7f;
    if (e == 0xff && m != 0) {
      TEST_ASSERT(isnan(f), "bf16 0x%04x", b);
      TEST_ASSERT(sc_float_to_bf16(f) == b, "bf16 0x%04x -> 0x%04x", b, sc_float_to_bf16(f));
    } else {
      if (e == 0xff)
        TEST_ASSERT(isinf(f) && (f < 0) == (b >> 15), "bf16 0x%04x", b);
      else
        TEST_ASSERT((double)f == bf16_value(b) && !signbit(f) == !signbit(bf16_value(b)),
                    "bf16 0x%04x -> %a, want %a", b, f, bf16_value(b));
      TEST_ASSERT(sc_float_to_bf16(f) == b, "bf16 0x%04x -> %a -> 0x%04x", b, f,
                  sc_float_to_bf16(f));
    }
  }
}

/* The positive finite values of a 16-bit format, in order of their bits (and
 * so of their values): index = bits. */
static double fp16_table[0x7c00], bf16_table[0x7f80];

/* Round-to-nearest-even of |x| by search in the table; `top` is the bits of
 * infinity, which takes everything from halfway past the largest finite. */
static uint16_t nearest(const double *table, uint16_t top, double ax) {
  double largest = table[top - 1];
  double next = largest + (largest - table[top - 2]); /* what would follow it */
  if (ax >= (largest + next) / 2)
    return top;
  if (ax >= largest)
    return (uint16_t)(top - 1);
  size_t lo = 0, hi = top - 1; /* table[lo] <= ax < table[hi] */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (table[mid] <= ax)
      lo = mid;
    else
      hi = mid;
  }
  double dlo = ax - table[lo], dhi = table[hi] - ax;
  if (dlo < dhi)
    return (uint16_t)lo;
  if (dhi < dlo)
    return (uint16_t)hi;
  return (uint16_t)((lo & 1) == 0 ? lo : hi);
}

static void check_rounding(uint32_t u) {
  float f = bits_to_float(u);
  if (isnan(f))
    return;
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  double ax = fabs((double)f);
  uint16_t want = (uint16_t)(sign | (isinf(f) ? 0x7c00 : nearest(fp16_table, 0x7c00, ax)));
  TEST_ASSERT(sc_float_to_fp16(f) == want, "float 0x%08x (%a) -> fp16 0x%04x, want 0x%04x", u, f,
              sc_float_to_fp16(f), want);
  want = (uint16_t)(sign | (isinf(f) ? 0x7f80 : nearest(bf16_table, 0x7f80, ax)));
  TEST_ASSERT(sc_float_to_bf16(f) == want, "float 0x%08x (%a) -> bf16 0x%04x, want 0x%04x", u, f,
              sc_float_to_bf16(f), want);
}

static void test_rounding(void) {
  for (uint32_t i = 0; i < 0x7c00; i++)
    fp16_table[i] = fp16_value((uint16_t)i);
  for (uint32_t i = 0; i < 0x7f80; i++)
    bf16_table[i] = bf16_value((uint16_t)i);

  /* ties and edges, fp16 */
  TEST_ASSERT(sc_float_to_fp16(1.0f) == 0x3c00 && sc_float_to_fp16(-2.0f) == 0xc000);
  TEST_ASSERT(sc_float_to_fp16(1.0f + 0x1p-11f) == 0x3c00);     /* tie: even is 1.0 */
  TEST_ASSERT(sc_float_to_fp16(1.0f + 3 * 0x1p-11f) == 0x3c02); /* tie: even is up */
  TEST_ASSERT(sc_float_to_fp16(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
  TEST_ASSERT(sc_float_to_fp16(65504.0f) == 0x7bff);
  TEST_ASSERT(sc_float_to_fp16(65519.996f) == 0x7bff);
  TEST_ASSERT(sc_float_to_fp16(65520.0f) == 0x7c00); /* tie past the largest: infinity */
  TEST_ASSERT(sc_float_to_fp16(-1e6f) == 0xfc00 && sc_float_to_fp16(FLT_MAX) == 0x7c00);
  TEST_ASSERT(sc_float_to_fp16(-INFINITY) == 0xfc00);
  TEST_ASSERT(sc_float_to_fp16(-0.0f) == 0x8000 && sc_float_to_fp16(0.0f) == 0x0000);
  TEST_ASSERT(sc_float_to_fp16(0x1p-24f) == 0x0001); /* smallest subnormal */
  TEST_ASSERT(sc_float_to_fp16(0x1p-25f) == 0x0000); /* tie: even is 0 */
  TEST_ASSERT(sc_float_to_fp16(-0x1p-25f) == 0x8000);
  TEST_ASSERT(sc_float_to_fp16(0x1.000002p-25f) == 0x0001);
  TEST_ASSERT(sc_float_to_fp16(3 * 0x1p-25f) == 0x0002);        /* tie: even is 2 */
  TEST_ASSERT(sc_float_to_fp16(5 * 0x1p-25f) == 0x0002);        /* tie: even is 2 */
  TEST_ASSERT(sc_float_to_fp16(0x1p-14f - 0x1p-25f) == 0x0400); /* tie into the smallest normal */
  TEST_ASSERT(sc_float_to_fp16(0x1p-14f) == 0x0400);
  TEST_ASSERT(sc_float_to_fp16(FLT_TRUE_MIN) == 0x0000 && sc_float_to_fp16(FLT_MIN) == 0x0000);
  uint16_t hn = sc_float_to_fp16(NAN);
  TEST_ASSERT((hn & 0x7c00) == 0x7c00 && (hn & 0x3ff) != 0);
  hn = sc_float_to_fp16(bits_to_float(0xff800001u)); /* payload only in low bits */
  TEST_ASSERT(hn == 0xfe00, "0x%04x", hn);
  TEST_ASSERT(sc_fp16_to_float(0x7bff) == 65504.0f && sc_fp16_to_float(0x0001) == 0x1p-24f);
  TEST_ASSERT(sc_fp16_to_float(0x03ff) == 0x3ffp-24f && sc_fp16_to_float(0x8200) == -0x1p-15f);

  /* ties and edges, bf16 */
  TEST_ASSERT(sc_float_to_bf16(1.0f) == 0x3f80 && sc_float_to_bf16(-2.0f) == 0xc000);
  TEST_ASSERT(sc_float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);     /* tie: even is 1.0 */
  TEST_ASSERT(sc_float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82); /* tie: even is up */
  TEST_ASSERT(sc_float_to_bf16(1.0f + 0x1p-8f + 0x1p-23f) == 0x3f81);
  TEST_ASSERT(sc_float_to_bf16(FLT_MAX) == 0x7f80); /* rounds past the largest */
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x7f7f7fffu)) == 0x7f7f);
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x7f7f8000u)) == 0x7f80); /* tie, odd: up */
  TEST_ASSERT(sc_float_to_bf16(-INFINITY) == 0xff80 && sc_float_to_bf16(-0.0f) == 0x8000);
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x00008000u)) == 0x0000); /* subnormal tie: even */
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x00018000u)) == 0x0002);
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x00008001u)) == 0x0001);
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x007fffffu)) == 0x0080); /* into FLT_MIN */
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0x7f800001u)) ==
              0x7fc0); /* payload only in low bits */
  TEST_ASSERT(sc_float_to_bf16(bits_to_float(0xffc00000u)) == 0xffc0);

  /* against the search, on a spread of floats and every float near the
   * boundaries that matter */
  size_t checked = 0;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) {
    check_rounding((uint32_t)u);
    checked++;
  }
  static const uint32_t centers[] = {
      0x00000000u, 0x00800000u, 0x33000000u, 0x33800000u, 0x387fc000u, 0x38800000u,
      0x3f800000u, 0x3f801000u, 0x3f808000u, 0x477fe000u, 0x477ff000u, 0x47800000u,
      0x7f7f0000u, 0x7f7f8000u, 0x7f800000u, 0x00008000u, 0x00018000u, 0x007f8000u};
  for (size_t c = 0; c < sizeof centers / sizeof centers[0]; c++)
    for (int64_t d = -20000; d <= 20000; d++) {
      int64_t u = (int64_t)centers[c] + d;
      if (u < 0 || u > 0x7fffffff)
        continue;
      check_rounding((uint32_t)u);
      check_rounding((uint32_t)u | 0x80000000u);
      checked += 2;
    }
  /* every fp16 subnormal and its neighbours: each halfway point, and one float either side */
  for (uint32_t h = 0; h < 0x0400; h++) {
    float mid = (float)((fp16_value((uint16_t)h) + fp16_value((uint16_t)(h + 1))) / 2);
    uint32_t mu = float_bits64(mid) & 0xffffffffu;
    check_rounding(mu - 1);
    check_rounding(mu);
    check_rounding(mu + 1);
    checked += 3;
  }
  printf("rounding: %zu floats checked against the search\n", checked);
}

/* ---- bad arguments: what the collective program refuses before it runs */

static void expect_bad(int nsrcs, int dtype, int op, int divisor, const char *what) {
  TEST_ASSERT(!sc_dev_reduce_ok(nsrcs, dtype, op, divisor), "%s: accepted", what);
}

static void test_bad_args(void) {
  expect_bad(0, SYMCOMM_INT32, SYMCOMM_AVG, 2, "nsrcs 0");
  expect_bad(-1, SYMCOMM_INT32, SYMCOMM_AVG, 2, "nsrcs -1");
  expect_bad(SC_MAX_LOCAL_RANKS + 1, SYMCOMM_INT32, SYMCOMM_AVG, 2, "nsrcs past the limit");
  expect_bad(2, -1, SYMCOMM_AVG, 2, "dtype -1");
  expect_bad(2, SYMCOMM_DTYPE_COUNT, SYMCOMM_AVG, 2, "dtype count");
  expect_bad(2, SYMCOMM_INT32, -1, 2, "op -1");
  expect_bad(2, SYMCOMM_INT32, SYMCOMM_OP_COUNT, 2, "op count");
  expect_bad(2, SYMCOMM_INT32, SYMCOMM_AVG, 0, "divisor 0");
  expect_bad(2, SYMCOMM_INT32, SYMCOMM_AVG, -2, "divisor -2");

  /* fine: the divisor matters only to AVG, pointers only when count > 0,
   * sources past nsrcs are ignored */
  int32_t s0[4] = {1, 2, 3, 4}, s1[4] = {5, 6, 7, 8}, d[4] = {9, 9, 9, 9};
  test_reduce_case_t good, a;
  memset(&good, 0, sizeof good);
  good.dst = d;
  good.srcs[0] = s0;
  good.srcs[1] = s1;
  good.nsrcs = 2;
  good.count = 4;
  good.dtype = SYMCOMM_INT32;
  good.op = SYMCOMM_AVG;
  good.avg_divisor = 2;
  a = good;
  a.op = SYMCOMM_SUM;
  a.avg_divisor = 0;
  a.srcs[2] = NULL;
  run_ok(&a);
  TEST_ASSERT(d[0] == 6 && d[3] == 12);
  a = good;
  a.count = 0;
  a.dst = NULL;
  a.srcs[0] = a.srcs[1] = NULL;
  run_ok(&a);
  a = good;
  a.nsrcs = SC_MAX_LOCAL_RANKS;
  for (int k = 0; k < SC_MAX_LOCAL_RANKS; k++)
    a.srcs[k] = s0;
  a.avg_divisor = SC_MAX_LOCAL_RANKS;
  run_ok(&a);
  TEST_ASSERT(d[0] == 1 && d[1] == 2 && d[2] == 3 && d[3] == 4);
}

/* A line of the LL protocol (sc_dev_reduce_line): word k of source k, every
 * element of it against the reference, for 1 to SC_LL_MAX_RANKS sources and
 * lines of 1 element to full; the words past the sources hold garbage, which
 * must not count, and a partial line's last bytes are 0 in every source (as
 * the LL protocol pushes them), which only its own lanes of the result may
 * depend on. The elements start at `first`, so that lines cover several
 * inputs of the matrix. */
static void test_lines(size_t first) {
  int cases = 0;
  for (int dtype = 0; dtype < SYMCOMM_DTYPE_COUNT; dtype++)
    for (int op = 0; op < SYMCOMM_OP_COUNT; op++)
      for (int nsrcs = 1; nsrcs <= SC_LL_MAX_RANKS; nsrcs++) {
        size_t lanes = 8 / dtype_bytes(dtype);
        for (size_t count = 1; count <= lanes; count++) {
          uint64_t w[SC_LL_MAX_RANKS];
          for (int k = 0; k < SC_LL_MAX_RANKS; k++)
            w[k] = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1 + (int)count);
          for (int k = 0; k < nsrcs; k++) {
            w[k] = 0;
            for (size_t i = 0; i < count; i++)
              put_bits(dtype, &w[k], i, encode(dtype, input(dtype, op, k, first + i)));
          }
          uint64_t out = sc_dev_reduce_line(w, nsrcs, dtype, op, nsrcs);
          for (size_t i = 0; i < count; i++) {
            double x[SC_MAX_LOCAL_RANKS];
            for (int k = 0; k < nsrcs; k++)
              x[k] = input(dtype, op, k, first + i);
            uint64_t want = reference(dtype, op, nsrcs, nsrcs, x);
            uint64_t got = get_bits(dtype, &out, i);
            TEST_ASSERT(got == want,
                        "line: %s %s nsrcs %d count %zu: element %zu is 0x%llx, want 0x%llx",
                        dtype_names[dtype], op_names[op], nsrcs, count, first + i,
                        (unsigned long long)got, (unsigned long long)want);
          }
          cases++;
        }
      }
  TEST_ASSERT(cases > 0);
}

int main(void) {
  for (int k = 0; k <= SC_MAX_LOCAL_RANKS; k++) {
    bufs[k] = malloc(MAX_COUNT * 8 + 8);
    TEST_ASSERT(bufs[k] != NULL);
  }
  test_roundtrips();
  test_rounding();
  test_integer_edges();
  test_float_edges();
  test_bad_args();
  for (size_t first = 0; first < 64; first += 7)
    test_lines(first);
  /* One thread, then blocks of threads that split 1000 elements unevenly
   * (SC_REDUCE_BLOCK is 256 here: some threads get the partial block, some none). */
  static const uint32_t thread_counts[] = {1, 2, 3, 5};
  for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
    threads = thread_counts[t];
    test_matrix();
  }
  for (int k = 0; k <= SC_MAX_LOCAL_RANKS; k++)
    free(bufs[k]);
  printf("reduce: ok\n");
  return 0;
}
