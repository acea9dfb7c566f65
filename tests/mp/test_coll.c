/* Collectives, checked bit for bit on every rank, under symcomm-run:
 *   test_coll matrix      every collective x dtype x op x in/out-of-place at
 *                         counts 0, 1, 1023 and 65537, every root for rooted ones
 *   test_coll large       a sample at about 4 MiB and more (chunked algorithms)
 *   test_coll algos       all-reduce forced one-shot and two-shot (SYMCOMM_ALGO)
 *   test_coll many        1,000 small all-reduces in a row
 *   test_coll concurrent  two split communicators running collectives at once
 *                         on different streams
 *   test_coll args        bad arguments fail before anything is queued
 *   test_coll mismatch    ranks calling different counts fail (and with
 *                         SYMCOMM_CHECK=1 the sentence names both calls)
 *   test_coll windows     all-reduce on buffers that are windows (used in place,
 *                         nothing staged), and windows at offsets that differ
 *   test_coll group       a group mixing collectives with sends and receives
 *   test_coll choices     ranks whose all-reduce choices differ (rank 0 forces
 *                         another algorithm, then uses a window where the
 *                         others do not) fail instead of mixing steps
 *   test_coll stopped     after a collective failed on one stream, the next on
 *                         another stream is refused at once, not at the timeout
 *   test_coll slow_order  a collective queued behind a long run of them on
 *                         another stream waits as long as they progress, even
 *                         past the timeout in all (3 s timeout, 5 s of work)
 * Inputs are small integers, so every result is exact in every type and any
 * summation order; the reference follows the documented semantics (integers
 * wrap, AVG truncates, fp16/bf16 accumulate in float and round once). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/reduce_types.h"
#include "test_util.h"

static symcomm_comm_t comm;
static symcomm_stream_t stream;
static int rank, nranks;

static const symcomm_dtype_t all_dtypes[] = {
    SYMCOMM_INT8,    SYMCOMM_UINT8,    SYMCOMM_INT32,   SYMCOMM_UINT32,  SYMCOMM_INT64,
    SYMCOMM_UINT64,  SYMCOMM_FLOAT16,  SYMCOMM_BFLOAT16, SYMCOMM_FLOAT32, SYMCOMM_FLOAT64};
static const symcomm_op_t all_ops[] = {SYMCOMM_SUM, SYMCOMM_PROD, SYMCOMM_MIN, SYMCOMM_MAX, SYMCOMM_AVG};

static size_t dsize(symcomm_dtype_t t) {
  size_t s = 0;
  symcomm_dtype_size(t, &s);
  return s;
}

static bool is_signed(symcomm_dtype_t t) {
  return t == SYMCOMM_INT8 || t == SYMCOMM_INT32 || t == SYMCOMM_INT64;
}

static bool is_float(symcomm_dtype_t t) { return t >= SYMCOMM_FLOAT16; }

/* The input of rank r at element i (a small integer; 1 or 2 for PROD). */
static double value(int r, size_t i, symcomm_op_t op, symcomm_dtype_t t, int salt) {
  if (op == SYMCOMM_PROD)
    return 1.0 + (double)((i + (size_t)r + (size_t)salt) % 2);
  double v = (double)((i * 7 + (size_t)r * 3 + (size_t)salt) % 4);
  return is_signed(t) || is_float(t) ? v - 1.0 : v;
}

static void store(void *buf, symcomm_dtype_t t, size_t i, double v) {
  switch (t) {
  case SYMCOMM_INT8: ((int8_t *)buf)[i] = (int8_t)(int64_t)v; break;
  case SYMCOMM_UINT8: ((uint8_t *)buf)[i] = (uint8_t)(uint64_t)(int64_t)v; break;
  case SYMCOMM_INT32: ((int32_t *)buf)[i] = (int32_t)(int64_t)v; break;
  case SYMCOMM_UINT32: ((uint32_t *)buf)[i] = (uint32_t)(uint64_t)(int64_t)v; break;
  case SYMCOMM_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
  case SYMCOMM_UINT64: ((uint64_t *)buf)[i] = (uint64_t)(int64_t)v; break;
  case SYMCOMM_FLOAT16: ((uint16_t *)buf)[i] = sc_float_to_fp16((float)v); break;
  case SYMCOMM_BFLOAT16: ((uint16_t *)buf)[i] = sc_float_to_bf16((float)v); break;
  case SYMCOMM_FLOAT32: ((float *)buf)[i] = (float)v; break;
  case SYMCOMM_FLOAT64: ((double *)buf)[i] = v; break;
  default: break;
  }
}

static void fill(void *buf, symcomm_dtype_t t, size_t count, int r, symcomm_op_t op, int salt) {
  for (size_t i = 0; i < count; i++)
    store(buf, t, i, value(r, i, op, t, salt));
}

/* The exact expected reduction of element i over ranks 0..n-1, stored in dtype. */
static void expect(void *out, symcomm_dtype_t t, size_t i, symcomm_op_t op, int n, int salt,
                   size_t block_offset) {
  size_t e = i + block_offset;
  if (is_float(t)) {
    bool wide = t == SYMCOMM_FLOAT64;
    double acc = value(0, e, op, t, salt);
    float facc = (float)acc;
    for (int r = 1; r < n; r++) {
      double v = value(r, e, op, t, salt);
      switch (op) {
      case SYMCOMM_SUM: case SYMCOMM_AVG: acc += v; facc += (float)v; break;
      case SYMCOMM_PROD: acc *= v; facc *= (float)v; break;
      case SYMCOMM_MIN: acc = v < acc ? v : acc; facc = (float)acc; break;
      case SYMCOMM_MAX: acc = v > acc ? v : acc; facc = (float)acc; break;
      default: break;
      }
    }
    if (op == SYMCOMM_AVG) {
      acc /= n;
      facc /= (float)n;
    }
    store(out, t, 0, wide ? acc : (double)facc);
    return;
  }
  /* Integers: wrap in the element's width (unsigned arithmetic), as the library. */
  int bits = (int)dsize(t) * 8;
  uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  uint64_t acc = (uint64_t)(int64_t)value(0, e, op, t, salt) & mask;
  for (int r = 1; r < n; r++) {
    uint64_t v = (uint64_t)(int64_t)value(r, e, op, t, salt) & mask;
    int64_t sa = 0, sv = 0;
    if (is_signed(t)) {
      sa = bits == 64 ? (int64_t)acc : (int64_t)(acc << (64 - bits)) >> (64 - bits);
      sv = bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
    }
    switch (op) {
    case SYMCOMM_SUM: case SYMCOMM_AVG: acc = (acc + v) & mask; break;
    case SYMCOMM_PROD: acc = (acc * v) & mask; break;
    case SYMCOMM_MIN: acc = is_signed(t) ? (sv < sa ? v : acc) : (v < acc ? v : acc); break;
    case SYMCOMM_MAX: acc = is_signed(t) ? (sv > sa ? v : acc) : (v > acc ? v : acc); break;
    default: break;
    }
  }
  if (op == SYMCOMM_AVG) {
    if (is_signed(t)) {
      int64_t s = bits == 64 ? (int64_t)acc : (int64_t)(acc << (64 - bits)) >> (64 - bits);
      acc = (uint64_t)(s / n) & mask;
    } else {
      acc = acc / (uint64_t)n;
    }
  }
  memcpy(out, &acc, dsize(t)); /* little-endian: the low bytes */
}

static size_t count_wrong_reduced(const void *buf, symcomm_dtype_t t, size_t count,
                                  symcomm_op_t op, int salt, size_t block_offset) {
  size_t wrong = 0, sz = dsize(t);
  unsigned char want[8];
  for (size_t i = 0; i < count; i++) {
    expect(want, t, i, op, nranks, salt, block_offset);
    wrong += memcmp((const char *)buf + i * sz, want, sz) != 0;
  }
  return wrong;
}

static size_t count_wrong_copy(const void *buf, symcomm_dtype_t t, size_t count, int from,
                               int salt, size_t offset) {
  size_t wrong = 0, sz = dsize(t);
  unsigned char want[8];
  for (size_t i = 0; i < count; i++) {
    store(want, t, 0, value(from, i + offset, SYMCOMM_SUM, t, salt));
    wrong += memcmp((const char *)buf + i * sz, want, sz) != 0;
  }
  return wrong;
}

#define SYNC() TEST_OK(symcomm_stream_synchronize(stream))

/* One collective of each kind at `count`, out of place and in place. */
static void run_one(symcomm_dtype_t t, symcomm_op_t op, size_t count, int root, int salt) {
  size_t sz = dsize(t), n = (size_t)nranks;
  char what[160];
  unsigned char *send = malloc(count * sz * n + 8), *recv = malloc(count * sz * n + 8);
  TEST_ASSERT(send != NULL && recv != NULL);
  for (int inplace = 0; inplace <= 1; inplace++) {
    snprintf(what, sizeof(what), "%s %s count %zu root %d %s", symcomm_dtype_string(t),
             symcomm_op_string(op), count, root, inplace ? "in place" : "out of place");
    /* all-reduce */
    fill(send, t, count, rank, op, salt);
    memset(recv, 0xa5, count * sz);
    TEST_OK(symcomm_allreduce(send, inplace ? send : recv, count, t, op, comm, stream));
    SYNC();
    TEST_ASSERT(count_wrong_reduced(inplace ? send : recv, t, count, op, salt, 0) == 0,
                "allreduce %s", what);
    /* reduce */
    fill(send, t, count, rank, op, salt);
    memset(recv, 0xa5, count * sz);
    TEST_OK(symcomm_reduce(send, inplace ? send : recv, count, t, op, root, comm, stream));
    SYNC();
    if (rank == root)
      TEST_ASSERT(count_wrong_reduced(inplace ? send : recv, t, count, op, salt, 0) == 0,
                  "reduce %s", what);
    /* reduce-scatter: block b of rank r's input = elements [b*count, (b+1)*count) */
    fill(send, t, count * n, rank, op, salt);
    void *rs_out = inplace ? send + (size_t)rank * count * sz : recv;
    TEST_OK(symcomm_reducescatter(send, rs_out, count, t, op, comm, stream));
    SYNC();
    TEST_ASSERT(count_wrong_reduced(rs_out, t, count, op, salt, (size_t)rank * count) == 0,
                "reducescatter %s", what);
    if (op != SYMCOMM_SUM)
      continue; /* the data-moving collectives do not depend on op */
    /* broadcast */
    fill(send, t, count, rank, op, salt);
    memset(recv, 0xa5, count * sz);
    void *bc = inplace ? send : recv;
    TEST_OK(symcomm_broadcast(send, bc, count, t, root, comm, stream));
    SYNC();
    TEST_ASSERT(count_wrong_copy(bc, t, count, root, salt, 0) == 0, "broadcast %s", what);
    /* all-gather */
    memset(recv, 0xa5, count * sz * n);
    void *ag_in = inplace ? recv + (size_t)rank * count * sz : send;
    fill(ag_in, t, count, rank, op, salt);
    TEST_OK(symcomm_allgather(ag_in, recv, count, t, comm, stream));
    SYNC();
    for (int r = 0; r < nranks; r++)
      TEST_ASSERT(count_wrong_copy(recv + (size_t)r * count * sz, t, count, r, salt, 0) == 0,
                  "allgather block %d %s", r, what);
    /* all-to-all: block b of rank r = value(r, b * count + i) */
    fill(send, t, count * n, rank, op, salt);
    void *a2a = inplace ? send : recv;
    TEST_OK(symcomm_alltoall(send, a2a, count, t, comm, stream));
    SYNC();
    for (int r = 0; r < nranks; r++)
      TEST_ASSERT(count_wrong_copy((char *)a2a + (size_t)r * count * sz, t, count, r, salt,
                                   (size_t)rank * count) == 0,
                  "alltoall block from %d %s", r, what);
  }
  free(send);
  free(recv);
}

static void test_matrix(void) {
  const size_t counts[] = {0, 1, 1023, 65537};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
    for (size_t d = 0; d < sizeof(all_dtypes) / sizeof(all_dtypes[0]); d++)
      for (size_t o = 0; o < sizeof(all_ops) / sizeof(all_ops[0]); o++) {
        /* The largest count on a sample of types, to keep CI quick. */
        if (counts[c] == 65537 && d % 3 != 0)
          continue;
        run_one(all_dtypes[d], all_ops[o], counts[c], (int)(c + d) % nranks, (int)(d + o));
      }
  /* Every root of the rooted collectives. */
  for (int root = 0; root < nranks; root++)
    run_one(SYMCOMM_INT32, SYMCOMM_SUM, 1023, root, root);
}

static void test_large(void) {
  run_one(SYMCOMM_FLOAT32, SYMCOMM_SUM, (1u << 20) + 3, 0, 1);    /* ~4 MiB of float32 */
  run_one(SYMCOMM_BFLOAT16, SYMCOMM_MAX, (2u << 20) + 5, nranks - 1, 2);
  run_one(SYMCOMM_INT8, SYMCOMM_PROD, (4u << 20) + 1, 1 % nranks, 3);
  run_one(SYMCOMM_FLOAT64, SYMCOMM_AVG, (1u << 20) + 7, 0, 4);     /* 8 MiB: several chunks */
}

static void test_many(void) {
  float v = (float)rank, out = 0;
  for (int i = 0; i < 1000; i++) {
    TEST_OK(symcomm_allreduce(&v, &out, 1, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream));
    if (i % 100 == 99) {
      SYNC();
      TEST_ASSERT(out == (float)(nranks * (nranks - 1) / 2), "iteration %d: %f", i, out);
    }
  }
  SYNC();
}

static void test_concurrent(void) {
  symcomm_comm_t half;
  TEST_OK(symcomm_comm_split(comm, rank % 2, rank, &half));
  int hr, hn;
  TEST_OK(symcomm_comm_rank(half, &hr));
  TEST_OK(symcomm_comm_size(half, &hn));
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(half, &s2));
  enum { N = 300000 };
  int32_t *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4), *d = malloc(N * 4);
  for (int round = 0; round < 20; round++) {
    for (int i = 0; i < N; i++) {
      a[i] = rank + i % 5 + round;
      c[i] = rank * 2 + i % 3;
    }
    /* On the world and on the half at the same time, on two streams. */
    TEST_OK(symcomm_allreduce(a, b, N, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
    TEST_OK(symcomm_allreduce(c, d, N, SYMCOMM_INT32, SYMCOMM_MAX, half, s2));
    SYNC();
    TEST_OK(symcomm_stream_synchronize(s2));
    for (int i = 0; i < N; i += 997) {
      int32_t sum = 0, max = INT32_MIN;
      for (int r = 0; r < nranks; r++) {
        sum += r + i % 5 + round;
        if (r % 2 == rank % 2 && r * 2 + i % 3 > max)
          max = r * 2 + i % 3;
      }
      TEST_ASSERT(b[i] == sum && d[i] == max, "round %d element %d: %d %d", round, i, b[i], d[i]);
    }
  }
  free(a);
  free(b);
  free(c);
  free(d);
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_comm_destroy(half));
  (void)hr;
  (void)hn;
}

static void test_args(void) {
  float buf[64];
  TEST_EXPECT_RESULT(symcomm_allreduce(buf, buf, 4, (symcomm_dtype_t)99, SYMCOMM_SUM, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_allreduce(buf, buf, 4, SYMCOMM_FLOAT32, (symcomm_op_t)9, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "unknown reduction 9"));
  TEST_EXPECT_RESULT(symcomm_reduce(buf, buf, 4, SYMCOMM_FLOAT32, SYMCOMM_SUM, nranks, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "root"));
  TEST_EXPECT_RESULT(symcomm_broadcast(buf, buf, 4, SYMCOMM_FLOAT32, -1, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_allgather(buf, buf, SIZE_MAX / 4, SYMCOMM_FLOAT32, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "overflow"));
  TEST_EXPECT_RESULT(symcomm_allreduce(NULL, buf, 4, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_allreduce(buf, buf + 2, 4, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "overlap"));
  TEST_EXPECT_RESULT(symcomm_allgather(buf + 1, buf, 2, SYMCOMM_FLOAT32, comm, stream),
                     rank * 2 == 1 ? SYMCOMM_OK : SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_allreduce(buf, buf, 4, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, NULL),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  /* Nothing was queued: a real collective still works and agrees everywhere. */
  TEST_OK(symcomm_stream_query(stream));
  run_one(SYMCOMM_UINT32, SYMCOMM_MAX, 10, 0, 1);
}

static void test_mismatch(void) {
  int32_t a[200] = {0}, b[200];
  size_t count = rank == nranks - 1 ? 200 : 100;
  symcomm_result_t r = symcomm_allreduce(a, b, count, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  const char *why = symcomm_last_error(comm);
  if (getenv("SYMCOMM_CHECK") != NULL)
    TEST_ASSERT(test_contains(why, "count 100") && test_contains(why, "count 200"), "%s", why);
  else
    TEST_ASSERT(test_contains(why, "disagree"), "%s", why);
}

/* All-reduce on window buffers, above the one-shot size so that the
 * in-place two-shot runs, in and out of place, in several types. */
static void test_windows(void) {
  const size_t counts[] = {70000, (1u << 20) + 3};
  const symcomm_dtype_t types[] = {SYMCOMM_FLOAT32, SYMCOMM_BFLOAT16, SYMCOMM_INT64, SYMCOMM_UINT8};
  void *mem = NULL;
  size_t cap = 2 * ((1u << 20) + 3) * 8 + 8192;
  TEST_OK(symcomm_mem_alloc(comm, cap, &mem));
  symcomm_window_t reg, alloc;
  TEST_OK(symcomm_window_register(comm, mem, cap, &reg));
  TEST_OK(symcomm_window_alloc(comm, cap, &alloc));
  for (size_t c = 0; c < 2; c++)
    for (size_t t = 0; t < 4; t++)
      for (int mode = 0; mode < 3; mode++) {
        size_t sz = dsize(types[t]), count = counts[c];
        /* 0: in place in the registered buffer; 1: registered -> allocated
         * window; 2: allocated window at an offset, out of place within it */
        char *send = mode == 2 ? (char *)symcomm_window_local(alloc) + 4096 : mem;
        char *recv = mode == 0 ? send : mode == 1 ? symcomm_window_local(alloc)
                                                  : send + count * sz;
        symcomm_op_t op = t == 3 ? SYMCOMM_MAX : SYMCOMM_SUM;
        fill(send, types[t], count, rank, op, (int)(c + t));
        TEST_OK(symcomm_allreduce(send, recv, count, types[t], op, comm, stream));
        SYNC();
        TEST_ASSERT(count_wrong_reduced(recv, types[t], count, op, (int)(c + t), 0) == 0,
                    "windows mode %d %s count %zu", mode, symcomm_dtype_string(types[t]), count);
      }
  /* Offsets that differ between ranks cannot be read symmetrically: caught. */
  char *send = (char *)symcomm_window_local(alloc) + (rank == 0 ? 0 : 64);
  symcomm_result_t r = symcomm_allreduce(send, send, 70000, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree"), "%s", symcomm_last_error(comm));
  TEST_OK(symcomm_window_free(alloc));
  TEST_OK(symcomm_window_free(reg));
  TEST_OK(symcomm_mem_free(comm, mem));
}

/* Collectives run where they are called, in stream order; the group's sends
 * and receives are queued at its end: nothing waits on anything else. */
static void test_group(void) {
  int32_t x = rank + 1, sum = 0, from_left = -1, gathered[64];
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  for (int round = 0; round < 3; round++) {
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, right, comm, stream));
    TEST_OK(symcomm_allreduce(&x, &sum, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
    TEST_OK(symcomm_recv(&from_left, 1, SYMCOMM_INT32, left, comm, stream));
    TEST_OK(symcomm_allgather(&x, gathered, 1, SYMCOMM_INT32, comm, stream));
    TEST_OK(symcomm_group_end());
    SYNC();
    TEST_ASSERT(sum == nranks * (nranks + 1) / 2 && from_left == left + 1, "sum %d from %d", sum,
                from_left);
    for (int r = 0; r < nranks; r++)
      TEST_ASSERT(gathered[r] == r + 1);
  }
}

static void expect_disagree(symcomm_result_t r) {
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree"), "%s", symcomm_last_error(comm));
}

/* main set SYMCOMM_ALGO for rank 0 only. Each case needs a fresh
 * communicator: a failed collective leaves the ranks out of step. */
static void test_choices(void) {
  enum { N = 70000 }; /* above the one-shot size: auto picks two-shot */
  float *a = calloc(N, sizeof(float)), *b = calloc(N, sizeof(float));
  expect_disagree(symcomm_allreduce(a, b, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream));
  symcomm_comm_t again;
  symcomm_stream_t s2;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &again));
  TEST_OK(symcomm_stream_create(again, &s2));
  symcomm_window_t w;
  TEST_OK(symcomm_window_alloc(again, N * sizeof(float), &w));
  float *in = rank == 0 ? symcomm_window_local(w) : a;
  for (int i = 0; i < N; i++)
    in[i] = 1.0f;
  symcomm_result_t r = symcomm_allreduce(in, in, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, again, s2);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(s2);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "window on rank 0 only: got %s",
              symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(again), "disagree"), "%s", symcomm_last_error(again));
  TEST_OK(symcomm_window_free(w));
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_comm_destroy(again));
  free(a);
  free(b);
}

static void test_stopped(void) {
  int32_t a[200] = {0}, b[200];
  size_t count = rank == nranks - 1 ? 200 : 100;
  expect_disagree(symcomm_allreduce(a, b, count, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  double t0 = test_now();
  symcomm_result_t r = symcomm_allreduce(a, b, 100, SYMCOMM_INT32, SYMCOMM_SUM, comm, s2);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "previous collective stopped"), "%s",
              symcomm_last_error(comm));
  /* And it stays refused, on any stream. */
  TEST_EXPECT_RESULT(symcomm_broadcast(a, b, 1, SYMCOMM_INT32, 0, comm, s2),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_now() - t0 < 20, "refusing took %.1f s", test_now() - t0);
  TEST_OK(symcomm_stream_destroy(s2));
}

static void test_slow_order(void) {
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  int32_t x[5], sum[5], y = rank, total = -1;
  for (int i = 0; i < 5; i++) {
    /* Rank 1 comes late to each: every one finishes inside the timeout,
     * the five together do not. */
    if (rank == 1)
      usleep(1000 * 1000);
    x[i] = rank + i;
    TEST_OK(symcomm_allreduce(&x[i], &sum[i], 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  }
  TEST_OK(symcomm_allreduce(&y, &total, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, s2));
  TEST_OK(symcomm_stream_synchronize(s2));
  SYNC();
  TEST_ASSERT(total == nranks * (nranks - 1) / 2, "total %d", total);
  for (int i = 0; i < 5; i++)
    TEST_ASSERT(sum[i] == nranks * (nranks - 1) / 2 + nranks * i, "sum %d: %d", i, sum[i]);
  TEST_OK(symcomm_stream_destroy(s2));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_coll matrix|large|algos|many|concurrent|args|mismatch|windows|"
                    "group|choices|stopped|slow_order\n");
    return 2;
  }
  const char *what = argv[1];
  const char *launch_rank = getenv("SYMCOMM_RANK");
  if (strcmp(what, "choices") == 0 && launch_rank != NULL && strcmp(launch_rank, "0") == 0)
    setenv("SYMCOMM_ALGO", "allreduce=oneshot", 1);
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  if (strcmp(what, "slow_order") == 0)
    config.timeout_ms = 3000;
  TEST_OK(symcomm_init_from_env(&comm, &config));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &nranks));
  TEST_OK(symcomm_stream_create(comm, &stream));
  if (strcmp(what, "matrix") == 0 || strcmp(what, "algos") == 0)
    test_matrix();
  else if (strcmp(what, "large") == 0)
    test_large();
  else if (strcmp(what, "many") == 0)
    test_many();
  else if (strcmp(what, "concurrent") == 0)
    test_concurrent();
  else if (strcmp(what, "args") == 0)
    test_args();
  else if (strcmp(what, "mismatch") == 0)
    test_mismatch();
  else if (strcmp(what, "windows") == 0)
    test_windows();
  else if (strcmp(what, "group") == 0)
    test_group();
  else if (strcmp(what, "choices") == 0)
    test_choices();
  else if (strcmp(what, "stopped") == 0)
    test_stopped();
  else if (strcmp(what, "slow_order") == 0)
    test_slow_order();
  else
    TEST_ASSERT(0, "unknown case %s", what);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_coll %s: passed on %d ranks\n", what, nranks);
  return 0;
}
