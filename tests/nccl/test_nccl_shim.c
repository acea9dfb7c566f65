/* A program written against nccl.h alone (no symcomm header), run on 4 ranks
 * of simulated GPUs under symcomm-run with symcomm's libnccl.so.2: every
 * collective over every datatype and operator nccl.h has that symcomm does,
 * in and out of place, odd counts, every root; sends and receives (a ring,
 * to itself in a group, all-to-all by grouped sends); bad input; a
 * non-blocking init; inits of several communicators in one group of one
 * process; split, memory and windows (default ones at offsets that differ
 * from rank to rank); ncclMemAlloc memory that outlives the
 * communicators of its time. Every element is checked exactly, the
 * data depends on rank and index, and outputs are reset before each call.
 *   test_nccl_shim ID-FILE   (rank 0 writes the unique id there; the others read it)
 *   SHIM_TEST_MAX_CTAS=N test_nccl_shim ID-FILE   only config.maxCTAs = N (test_max_ctas)
 * Host memory stands in for device memory, and a NULL stream makes each call
 * return once its work is done (README.md, "libnccl.so.2"). */
#include <dlfcn.h>
#include <math.h>
#include <nccl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_nranks;

#define FAIL(...)                                                   \
  do {                                                              \
    fprintf(stderr, "rank %d: FAIL %s:%d: ", g_rank, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                   \
    fprintf(stderr, "\n");                                          \
    exit(1);                                                        \
  } while (0)
#define NCCL_OK(call)                                                                     \
  do {                                                                                    \
    ncclResult_t r_ = (call);                                                             \
    if (r_ != ncclSuccess)                                                                \
      FAIL("%s -> %s: %s", #call, ncclGetErrorString(r_), ncclGetLastError(NULL));        \
  } while (0)
/* The call fails with `want`, and ncclGetLastError has a sentence naming `word`. */
#define NCCL_REFUSED(want, word, call)                                                    \
  do {                                                                                    \
    ncclResult_t r_ = (call);                                                             \
    const char *why_ = ncclGetLastError(NULL);                                            \
    if (r_ != (want))                                                                     \
      FAIL("%s -> %d, not %s", #call, (int)r_, #want);                                    \
    if (strstr(why_, (word)) == NULL)                                                     \
      FAIL("%s: last error '%s' does not say '%s'", #call, why_, (word));                 \
  } while (0)

/* ---- values */

static size_t type_size(ncclDataType_t t) {
  switch (t) {
  case ncclInt8: case ncclUint8: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
  case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
  default: return 1; /* fp8 */
  }
}
static int type_is_fp8(ncclDataType_t t) { return t >= ncclBfloat16 + 1 && t < ncclNumTypes; }
static int type_signed(ncclDataType_t t) {
  return t == ncclInt8 || t == ncclInt32 || t == ncclInt64 || t == ncclFloat16 ||
         t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16;
}

/* Small values whose reductions are exact in every type: PROD multiplies
 * 1s and 2s (some negated), the others take [-4, 4] ([0, 8] unsigned). */
static int64_t small_value(int seed, int rank, size_t i, ncclRedOp_t op, ncclDataType_t t) {
  uint64_t h = (uint64_t)seed * 1000003u + (uint64_t)rank * 7919u + i * 104729u;
  h ^= h >> 13;
  h *= 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  if (op == ncclProd) {
    int64_t v = (h & 7) == 0 ? 2 : 1;
    return type_signed(t) && ((h >> 5) & 7) == 0 ? -v : v;
  }
  int64_t v = (int64_t)(h % 9);
  return type_signed(t) ? v - 4 : v;
}

static uint16_t to_half(double v) {
  uint16_t sign = v < 0 ? 0x8000 : 0;
  v = fabs(v);
  if (v == 0)
    return sign;
  int e;
  double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
  return sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024);
}
static uint16_t to_bf16(double v) {
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  return (uint16_t)(b >> 16);
}

static void store(void *buf, ncclDataType_t t, size_t i, double v) {
  switch (t) {
  case ncclInt8: ((int8_t *)buf)[i] = (int8_t)v; break;
  case ncclUint8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
  case ncclInt32: ((int32_t *)buf)[i] = (int32_t)v; break;
  case ncclUint32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
  case ncclInt64: ((int64_t *)buf)[i] = (int64_t)v; break;
  case ncclUint64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
  case ncclFloat16: ((uint16_t *)buf)[i] = to_half(v); break;
  case ncclBfloat16: ((uint16_t *)buf)[i] = to_bf16(v); break;
  case ncclFloat32: ((float *)buf)[i] = (float)v; break;
  case ncclFloat64: ((double *)buf)[i] = v; break;
  default: FAIL("no store for type %d", (int)t);
  }
}

static void fill_reduce(void *buf, size_t count, ncclDataType_t t, ncclRedOp_t op, int seed, int rank) {
  for (size_t i = 0; i < count; i++)
    store(buf, t, i, (double)small_value(seed, rank, i, op, t));
}

/* The exact result of op over every rank's value at element i. */
static double reduced(int seed, size_t i, ncclRedOp_t op, ncclDataType_t t) {
  int64_t acc = small_value(seed, 0, i, op, t);
  for (int r = 1; r < g_nranks; r++) {
    int64_t v = small_value(seed, r, i, op, t);
    if (op == ncclSum || op == ncclAvg) acc += v;
    else if (op == ncclProd) acc *= v;
    else if (op == ncclMax) acc = v > acc ? v : acc;
    else acc = v < acc ? v : acc;
  }
  if (op != ncclAvg)
    return (double)acc;
  int is_float = t == ncclFloat16 || t == ncclBfloat16 || t == ncclFloat32 || t == ncclFloat64;
  return is_float ? (double)acc / g_nranks : (double)(acc / g_nranks);
}

static void check_reduced(const void *buf, size_t count, ncclDataType_t t, ncclRedOp_t op, int seed,
                          const char *what) {
  size_t es = type_size(t);
  unsigned char want[8];
  for (size_t i = 0; i < count; i++) {
    store(want, t, 0, reduced(seed, i, op, t));
    if (memcmp(want, (const char *)buf + i * es, es) != 0)
      FAIL("%s type %d op %d count %zu: element %zu is wrong", what, (int)t, (int)op, count, i);
  }
}

/* Data that is only moved: bytes of rank `from` at byte index i. */
static unsigned char moved_byte(int seed, int from, size_t i) {
  uint64_t h = (uint64_t)seed * 2654435761u ^ ((uint64_t)from << 40) ^ (i * 0x9e3779b97f4a7c15ull);
  h ^= h >> 31;
  return (unsigned char)(h * 0xbf58476d1ce4e5b9ull >> 56);
}
static void fill_moved(void *buf, size_t bytes, int seed, int from, size_t first) {
  for (size_t i = 0; i < bytes; i++)
    ((unsigned char *)buf)[i] = moved_byte(seed, from, first + i);
}
static void check_moved(const void *buf, size_t bytes, int seed, int from, size_t first,
                        const char *what) {
  for (size_t i = 0; i < bytes; i++)
    if (((const unsigned char *)buf)[i] != moved_byte(seed, from, first + i))
      FAIL("%s: byte %zu of %zu (from rank %d) is wrong", what, i, bytes, from);
}

#define SENTINEL 0xa5
static void reset(void *buf, size_t bytes) { memset(buf, SENTINEL, bytes); }

/* ---- the collectives */

static const size_t counts[] = {1, 7, 1031};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static void test_reductions(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  int seed = 1;
  for (int t = 0; t < ncclNumTypes; t++) {
    if (type_is_fp8((ncclDataType_t)t))
      continue;
    size_t es = type_size((ncclDataType_t)t);
    for (int op = 0; op < ncclNumOps; op++)
      for (size_t k = 0; k < NCOUNTS; k++)
        for (int in_place = 0; in_place < 2; in_place++) {
          size_t n = counts[k], one = n * es;
          ncclDataType_t dt = (ncclDataType_t)t;
          ncclRedOp_t o = (ncclRedOp_t)op;
          /* all-reduce */
          seed++;
          reset(b, one);
          fill_reduce(a, n, dt, o, seed, g_rank);
          NCCL_OK(ncclAllReduce(a, in_place ? a : b, n, dt, o, comm, NULL));
          check_reduced(in_place ? a : b, n, dt, o, seed, "all-reduce");
          /* reduce, to every root */
          for (int root = 0; root < g_nranks; root++) {
            seed++;
            reset(b, one);
            fill_reduce(a, n, dt, o, seed, g_rank);
            NCCL_OK(ncclReduce(a, in_place ? a : b, n, dt, o, root, comm, NULL));
            if (g_rank == root)
              check_reduced(in_place ? a : b, n, dt, o, seed, "reduce");
          }
          /* reduce-scatter: rank r gets block r; block j of each input is
           * that rank's values at indices j*n.. */
          seed++;
          for (int j = 0; j < g_nranks; j++)
            for (size_t i = 0; i < n; i++)
              store(a, dt, (size_t)j * n + i, (double)small_value(seed, g_rank, (size_t)j * n + i, o, dt));
          reset(b, one);
          void *out = in_place ? a + (size_t)g_rank * one : b;
          NCCL_OK(ncclReduceScatter(a, out, n, dt, o, comm, NULL));
          unsigned char want[8];
          for (size_t i = 0; i < n; i++) {
            store(want, dt, 0, reduced(seed, (size_t)g_rank * n + i, o, dt));
            if (memcmp(want, (char *)out + i * es, es) != 0)
              FAIL("reduce-scatter type %d op %d count %zu in_place %d: element %zu is wrong", t,
                   op, n, in_place, i);
          }
        }
  }
}

static void test_moves(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  int seed = 100000;
  for (int t = 0; t < ncclNumTypes; t++)
    for (size_t k = 0; k < NCOUNTS; k++)
      for (int in_place = 0; in_place < 2; in_place++) {
        ncclDataType_t dt = (ncclDataType_t)t;
        size_t n = counts[k], one = n * type_size(dt), all = one * (size_t)g_nranks;
        /* broadcast and bcast, from every root */
        for (int root = 0; root < g_nranks; root++) {
          seed++;
          reset(b, one);
          fill_moved(a, one, seed, g_rank, 0);
          if (in_place)
            NCCL_OK(ncclBcast(a, n, dt, root, comm, NULL));
          else
            NCCL_OK(ncclBroadcast(a, b, n, dt, root, comm, NULL));
          check_moved(in_place ? a : b, one, seed, root, 0, "broadcast");
        }
        /* all-gather */
        seed++;
        reset(b, all);
        unsigned char *src = in_place ? b + (size_t)g_rank * one : a;
        fill_moved(src, one, seed, g_rank, 0);
        NCCL_OK(ncclAllGather(src, b, n, dt, comm, NULL));
        for (int r = 0; r < g_nranks; r++)
          check_moved(b + (size_t)r * one, one, seed, r, 0, "all-gather");
        /* all-to-all (out of place): block r goes to rank r */
        if (!in_place) {
          seed++;
          fill_moved(a, all, seed, g_rank, 0);
          reset(b, all);
          NCCL_OK(ncclAlltoAll(a, b, n, dt, comm, NULL));
          for (int r = 0; r < g_nranks; r++)
            check_moved(b + (size_t)r * one, one, seed, r, (size_t)g_rank * one, "all-to-all");
        }
        /* gather and scatter, every root */
        for (int root = 0; root < g_nranks; root++) {
          seed++;
          reset(b, all);
          src = in_place && g_rank == root ? b + (size_t)root * one : a;
          fill_moved(src, one, seed, g_rank, 0);
          NCCL_OK(ncclGather(src, b, n, dt, root, comm, NULL));
          if (g_rank == root)
            for (int r = 0; r < g_nranks; r++)
              check_moved(b + (size_t)r * one, one, seed, r, 0, "gather");
          seed++;
          fill_moved(a, all, seed, g_rank, 0);
          reset(b, one);
          void *dst = in_place && g_rank == root ? a + (size_t)root * one : b;
          NCCL_OK(ncclScatter(a, dst, n, dt, root, comm, NULL));
          check_moved(dst, one, seed, root, (size_t)g_rank * one, "scatter");
        }
      }
}

static void test_p2p(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  int right = (g_rank + 1) % g_nranks, left = (g_rank + g_nranks - 1) % g_nranks;
  for (size_t k = 0; k < NCOUNTS; k++) {
    size_t n = counts[k] * 4; /* float32 */
    int seed = 200000 + (int)k;
    /* a ring */
    fill_moved(a, n, seed, g_rank, 0);
    reset(b, n);
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclSend(a, counts[k], ncclFloat32, right, comm, NULL));
    NCCL_OK(ncclRecv(b, counts[k], ncclFloat32, left, comm, NULL));
    NCCL_OK(ncclGroupEnd());
    check_moved(b, n, seed, left, 0, "ring");
    /* to itself, in a (nested) group */
    seed += 1000;
    fill_moved(a, n, seed, g_rank, 0);
    reset(b, n);
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclGroupStart());
    NCCL_OK(ncclRecv(b, counts[k], ncclFloat32, g_rank, comm, NULL));
    NCCL_OK(ncclGroupEnd());
    NCCL_OK(ncclSend(a, counts[k], ncclFloat32, g_rank, comm, NULL));
    NCCL_OK(ncclGroupEnd());
    check_moved(b, n, seed, g_rank, 0, "send to self");
    /* all-to-all as PyTorch posts it: one send and one receive per rank, itself included */
    seed += 1000;
    size_t all = n * (size_t)g_nranks;
    fill_moved(a, all, seed, g_rank, 0);
    reset(b, all);
    NCCL_OK(ncclGroupStart());
    for (int r = 0; r < g_nranks; r++) {
      NCCL_OK(ncclSend(a + (size_t)r * n, counts[k], ncclFloat32, r, comm, NULL));
      NCCL_OK(ncclRecv(b + (size_t)r * n, counts[k], ncclFloat32, r, comm, NULL));
    }
    NCCL_OK(ncclGroupEnd());
    for (int r = 0; r < g_nranks; r++)
      check_moved(b + (size_t)r * n, n, seed, r, (size_t)g_rank * n, "grouped all-to-all");
  }
}

/* ---- bad input */

static void test_bad_input(ncclComm_t comm, unsigned char *a, unsigned char *b, ncclUniqueId id) {
  ncclComm_t c = NULL;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.magic = 0x12345678;
  NCCL_REFUSED(ncclInvalidArgument, "magic", ncclCommInitRankConfig(&c, g_nranks, id, g_rank, &cfg));
  ncclConfig_t old = NCCL_CONFIG_INITIALIZER;
  old.version = NCCL_VERSION(2, 12, 0);
  NCCL_REFUSED(ncclInvalidArgument, "version", ncclCommInitRankConfig(&c, g_nranks, id, g_rank, &old));
  if (c != NULL)
    FAIL("a refused init set the communicator");
  NCCL_REFUSED(ncclInvalidArgument, "NULL", ncclAllReduce(a, b, 1, ncclFloat32, ncclSum, NULL, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "SIZE_MAX",
               ncclAllReduce(a, b, SIZE_MAX / 2, ncclFloat32, ncclSum, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "SIZE_MAX",
               ncclAllGather(a, b, SIZE_MAX / 2, ncclInt8, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "datatype", ncclAllReduce(a, b, 1, (ncclDataType_t)99, ncclSum, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "datatype", ncclBroadcast(a, b, 1, (ncclDataType_t)-1, 0, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "operator", ncclAllReduce(a, b, 1, ncclFloat32, (ncclRedOp_t)77, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "operator", ncclReduce(a, b, 1, ncclInt32, (ncclRedOp_t)-3, 0, comm, NULL));
  if (ncclNumTypes > ncclBfloat16 + 1)
    NCCL_REFUSED(ncclInvalidUsage, "fp8",
                 ncclAllReduce(a, b, 4, (ncclDataType_t)(ncclBfloat16 + 1), ncclSum, comm, NULL));
  ncclRedOp_t op;
  float scalar = 0.5f;
  NCCL_REFUSED(ncclInvalidUsage, "pre-multiplied",
               ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  NCCL_REFUSED(ncclInvalidUsage, "itself", ncclSend(a, 1, ncclFloat32, g_rank, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "peer", ncclSend(a, 1, ncclFloat32, g_nranks, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "root", ncclGather(a, b, 1, ncclFloat32, -1, comm, NULL));
  NCCL_REFUSED(ncclInvalidUsage, "ncclGroupStart", ncclGroupEnd());
  /* a communicator used after destroy */
  ncclComm_t sub = NULL;
  NCCL_OK(ncclCommSplit(comm, 0, g_rank, &sub, NULL));
  NCCL_OK(ncclCommDestroy(sub));
  NCCL_REFUSED(ncclInvalidArgument, "not a live communicator",
               ncclAllReduce(a, b, 1, ncclFloat32, ncclSum, sub, NULL));
  int count = -1;
  NCCL_REFUSED(ncclInvalidArgument, "not a live communicator", ncclCommCount(sub, &count));
  NCCL_REFUSED(ncclInvalidArgument, "not a live communicator", ncclCommDestroy(sub));
  /* the communicator still works after all that */
  fill_reduce(a, 5, ncclInt32, ncclSum, 7, g_rank);
  NCCL_OK(ncclAllReduce(a, b, 5, ncclInt32, ncclSum, comm, NULL));
  check_reduced(b, 5, ncclInt32, ncclSum, 7, "all-reduce after bad input");
}

/* ---- failures inside groups, from other threads, of freeing */

static void *abort_soon(void *comm) {
  usleep(200000);
  ncclResult_t r = ncclCommAbort((ncclComm_t)comm);
  return (void *)(intptr_t)r;
}

static void test_failures(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  int right = (g_rank + 1) % g_nranks, left = (g_rank + g_nranks - 1) % g_nranks;
  /* A refused call makes the group's end fail too (as NCCL's does); the
   * group's other calls ran. */
  fill_moved(a, 64, 300000, g_rank, 0);
  reset(b, 64);
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclSend(a, 16, ncclFloat32, right, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "datatype", ncclAllReduce(a, b, 1, (ncclDataType_t)99, ncclSum, comm, NULL));
  NCCL_OK(ncclRecv(b, 16, ncclFloat32, left, comm, NULL));
  NCCL_REFUSED(ncclInvalidArgument, "datatype 99", ncclGroupEnd());
  check_moved(b, 64, 300000, left, 0, "the ring of a group with a refused call");
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclGroupEnd()); /* the failure does not outlive its group */

  /* A communicator that ends inside an open group: the group's end refuses
   * it rather than waiting on freed memory. */
  ncclComm_t sub = NULL;
  NCCL_OK(ncclCommSplit(comm, 0, g_rank, &sub, NULL));
  fill_reduce(a, 5, ncclInt32, ncclSum, 31, g_rank);
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclAllReduce(a, b, 5, ncclInt32, ncclSum, sub, NULL));
  NCCL_OK(ncclCommDestroy(sub));
  NCCL_REFUSED(ncclInvalidArgument, "not a live communicator", ncclGroupEnd());

  /* ncclCommAbort from another thread ends rank 0's all-reduce that the
   * others never join; the call returns an error, and comm outlives it. */
  NCCL_OK(ncclCommSplit(comm, 0, g_rank, &sub, NULL));
  if (g_rank == 0) {
    pthread_t t;
    void *aborted = NULL;
    if (pthread_create(&t, NULL, abort_soon, sub) != 0)
      FAIL("no thread");
    ncclResult_t r = ncclAllReduce(a, b, 5, ncclInt32, ncclSum, sub, NULL);
    pthread_join(t, &aborted);
    if (r == ncclSuccess || (ncclResult_t)(intptr_t)aborted != ncclSuccess)
      FAIL("all-reduce during an abort gave %d, the abort %d", (int)r, (int)(intptr_t)aborted);
  }
  fill_reduce(a, 5, ncclInt32, ncclSum, 32, g_rank);
  NCCL_OK(ncclAllReduce(a, b, 5, ncclInt32, ncclSum, comm, NULL));
  check_reduced(b, 5, ncclInt32, ncclSum, 32, "all-reduce after an abort of a split");
  if (g_rank != 0)
    NCCL_OK(ncclCommDestroy(sub));

  /* ncclMemFree of a buffer with a window is refused, and it may be freed
   * once the window is gone. */
  void *mem = NULL;
  ncclWindow_t win;
  NCCL_OK(ncclMemAlloc(&mem, 4096));
  NCCL_OK(ncclCommWindowRegister(comm, mem, 4096, &win, 0));
  NCCL_REFUSED(ncclInvalidUsage, "window", ncclMemFree(mem));
  NCCL_OK(ncclCommWindowDeregister(comm, win));
  NCCL_OK(ncclMemFree(mem));
}

/* ---- split, memory, windows */

/* A window registered without NCCL_WIN_COLL_SYMMETRIC (NCCL_WIN_DEFAULT)
 * promises nothing about offsets: each rank passes its buffers at an offset
 * of its own (rank x 4096 bytes), and all-reduce and all-gather (above the
 * LL and one-shot sizes) still give every element right. */
static void test_window_any_offset(ncclComm_t comm) {
  enum { COUNT = 20011 }; /* floats: 80 KB a rank */
  size_t one = COUNT * sizeof(float), all = one * (size_t)g_nranks;
  size_t bytes = (size_t)g_nranks * 4096 + one + all;
  void *mem = NULL;
  NCCL_OK(ncclMemAlloc(&mem, bytes));
  ncclWindow_t win;
  NCCL_OK(ncclCommWindowRegister(comm, mem, bytes, &win, 0));
  unsigned char *in = (unsigned char *)mem + (size_t)g_rank * 4096, *out = in + one;
  for (int round = 0; round < 2; round++) {
    reset(out, all);
    fill_reduce(in, COUNT, ncclFloat32, ncclSum, 80 + round, g_rank);
    NCCL_OK(ncclAllReduce(in, out, COUNT, ncclFloat32, ncclSum, comm, NULL));
    check_reduced(out, COUNT, ncclFloat32, ncclSum, 80 + round,
                  "all-reduce in a default window at offsets that differ");
    reset(out, all);
    fill_moved(in, one, 90 + round, g_rank, 0);
    NCCL_OK(ncclAllGather(in, out, COUNT, ncclFloat32, comm, NULL));
    for (int r = 0; r < g_nranks; r++)
      check_moved(out + (size_t)r * one, one, 90 + round, r, 0,
                  "all-gather in a default window at offsets that differ");
  }
  NCCL_OK(ncclCommWindowDeregister(comm, win));
  NCCL_OK(ncclMemFree(mem));
}

static void test_split_and_windows(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  ncclComm_t half = NULL;
  NCCL_OK(ncclCommSplit(comm, g_rank % 2, -g_rank, &half, NULL));
  int n = 0, me = -1;
  NCCL_OK(ncclCommCount(half, &n));
  NCCL_OK(ncclCommUserRank(half, &me));
  int want_n = (g_nranks + 1 - g_rank % 2) / 2;
  if (n != want_n || me != want_n - 1 - g_rank / 2)
    FAIL("split: rank %d of %d, expected %d of %d", me, n, want_n - 1 - g_rank / 2, want_n);
  int64_t x = g_rank + 1, sum = 0, want = 0;
  for (int r = g_rank % 2; r < g_nranks; r += 2)
    want += r + 1;
  NCCL_OK(ncclAllReduce(&x, &sum, 1, ncclInt64, ncclSum, half, NULL));
  if (sum != want)
    FAIL("split all-reduce gave %lld, not %lld", (long long)sum, (long long)want);
  ncclComm_t none = (ncclComm_t)a;
  NCCL_OK(ncclCommSplit(comm, g_rank == 0 ? NCCL_SPLIT_NOCOLOR : 1, 0, &none, NULL));
  if ((g_rank == 0) != (none == NULL))
    FAIL("split with NCCL_SPLIT_NOCOLOR: newcomm %p on rank %d", (void *)none, g_rank);
  if (none != NULL)
    NCCL_OK(ncclCommDestroy(none));
  NCCL_OK(ncclCommDestroy(half));

  void *mem = NULL;
  size_t bytes = 1 << 16;
  NCCL_OK(ncclMemAlloc(&mem, bytes));
  ncclWindow_t win;
  NCCL_OK(ncclCommWindowRegister(comm, mem, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  fill_reduce(mem, 1000, ncclFloat32, ncclSum, 9, g_rank);
  NCCL_OK(ncclAllReduce(mem, mem, 1000, ncclFloat32, ncclSum, comm, NULL));
  check_reduced(mem, 1000, ncclFloat32, ncclSum, 9, "all-reduce in a window");
  NCCL_OK(ncclCommWindowDeregister(comm, win));
  NCCL_REFUSED(ncclInvalidArgument, "not a window", ncclCommWindowDeregister(comm, win));
  NCCL_OK(ncclMemFree(mem));
  NCCL_REFUSED(ncclInvalidArgument, "ncclMemAlloc", ncclMemFree(mem));
  test_window_any_offset(comm);
  void *handle = NULL;
  NCCL_OK(ncclCommRegister(comm, b, 4096, &handle));
  NCCL_OK(ncclCommDeregister(comm, handle));
  NCCL_REFUSED(ncclInvalidArgument, "not a registration", ncclCommDeregister(comm, handle));
}

/* ---- ncclMemAlloc memory is the process's, as NCCL's is (issue 11): made
 * while only comm exists, it becomes a window of a split made afterwards
 * (ranks in reverse order), serves that split after comm is destroyed, and
 * is freed before the split goes. Destroys comm and the split. */

static void test_memory_outlives(ncclComm_t comm) {
  enum { COUNT = 3001 };
  size_t bytes = COUNT * sizeof(int64_t);
  void *mem = NULL;
  NCCL_OK(ncclMemAlloc(&mem, bytes));
  ncclComm_t later = NULL;
  int me = g_nranks - 1 - g_rank;
  NCCL_OK(ncclCommSplit(comm, 0, me, &later, NULL));
  ncclWindow_t win;
  NCCL_OK(ncclCommWindowRegister(later, mem, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  fill_reduce(mem, COUNT, ncclInt64, ncclSum, 71, me);
  NCCL_OK(ncclAllReduce(mem, mem, COUNT, ncclInt64, ncclSum, later, NULL));
  check_reduced(mem, COUNT, ncclInt64, ncclSum, 71, "all-reduce in a window of a later split");
  NCCL_OK(ncclCommFinalize(comm));
  NCCL_OK(ncclCommDestroy(comm));
  fill_reduce(mem, COUNT, ncclInt64, ncclMax, 72, me);
  NCCL_OK(ncclAllReduce(mem, mem, COUNT, ncclInt64, ncclMax, later, NULL));
  check_reduced(mem, COUNT, ncclInt64, ncclMax, 72,
                "all-reduce in the window after the allocating communicator's destroy");
  NCCL_REFUSED(ncclInvalidUsage, "window", ncclMemFree(mem));
  NCCL_OK(ncclCommWindowDeregister(later, win));
  NCCL_REFUSED(ncclInvalidArgument, "ncclMemAlloc", ncclMemFree((char *)mem + 8));
  NCCL_OK(ncclMemFree(mem));
  NCCL_REFUSED(ncclInvalidArgument, "ncclMemAlloc", ncclMemFree(mem));
  /* NULL frees nothing, as NCCL's (cudaFree(NULL)) and free(NULL) do. */
  NCCL_OK(ncclMemFree(NULL));
  NCCL_REFUSED(ncclInvalidArgument, "size of 0", ncclMemAlloc(&mem, 0));
  NCCL_REFUSED(ncclInvalidArgument, "output pointer", ncclMemAlloc(NULL, 64));
  NCCL_OK(ncclCommDestroy(later));
}

/* ---- several communicators in one process: one group, and ncclCommInitAll */

static void check_pair(ncclComm_t *c, int k, const char *what) {
  int32_t in[2][3], out[2][3];
  NCCL_OK(ncclGroupStart());
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < 3; j++)
      in[i][j] = 100 * i + j;
    NCCL_OK(ncclAllReduce(in[i], out[i], 3, ncclInt32, ncclSum, c[i], NULL));
  }
  NCCL_OK(ncclGroupEnd());
  for (int i = 0; i < k; i++)
    for (int j = 0; j < 3; j++)
      if (out[i][j] != 100 + 2 * j)
        FAIL("%s: rank %d element %d is %d, not %d", what, i, j, out[i][j], 100 + 2 * j);
}

static void test_one_process(void) {
  ncclUniqueId id;
  ncclComm_t c[2] = {NULL, NULL};
  NCCL_OK(ncclGetUniqueId(&id));
  NCCL_OK(ncclGroupStart());
  for (int i = 0; i < 2; i++)
    NCCL_OK(ncclCommInitRank(&c[i], 2, id, i));
  NCCL_OK(ncclGroupEnd());
  check_pair(c, 2, "two ranks made in one group");
  for (int i = 0; i < 2; i++)
    NCCL_OK(ncclCommDestroy(c[i]));
  NCCL_OK(ncclCommInitAll(c, 2, NULL));
  check_pair(c, 2, "ncclCommInitAll");
  for (int i = 0; i < 2; i++)
    NCCL_OK(ncclCommDestroy(c[i]));
}

/* ---- the profiling interface: pncclXxx is ncclXxx under another name */

static void *twin(void *lib, const char *name, void **plain) {
  char pname[128];
  snprintf(pname, sizeof(pname), "p%s", name);
  void *p = dlsym(lib, pname);
  *plain = dlsym(lib, name);
  if (p == NULL || *plain == NULL)
    FAIL("libnccl.so.2 has %s %p and %s %p", name, *plain, pname, p);
  if (p != *plain)
    FAIL("%s is at %p, %s at %p: a copy, not an alias", pname, p, name, *plain);
  return p;
}

static void test_profiling_twins(ncclComm_t comm, unsigned char *a, unsigned char *b) {
  /* Looked up in the library itself: the program's own references to
   * ncclXxx may resolve to its PLT. */
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL)
    FAIL("libnccl.so.2 is not loaded: %s", dlerror());
  void *plain;
  ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = twin(lib, "ncclAllReduce", &plain);
  ncclResult_t (*count)(const ncclComm_t, int *) = twin(lib, "ncclCommCount", &plain);
  const char *(*error_string)(ncclResult_t) = twin(lib, "ncclGetErrorString", &plain);
  const char *(*last_error)(ncclComm_t) = twin(lib, "ncclGetLastError", &plain);
  ncclResult_t (*group_start)(void) = twin(lib, "ncclGroupStart", &plain);
  ncclResult_t (*group_end)(void) = twin(lib, "ncclGroupEnd", &plain);
  ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) =
      twin(lib, "ncclSend", &plain);
  ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) =
      twin(lib, "ncclRecv", &plain);
  (void)twin(lib, "ncclCommInitRankConfig", &plain);
  (void)twin(lib, "ncclDevCommCreate", &plain);
  /* and they do what the plain calls do */
  fill_reduce(a, 33, ncclInt32, ncclMax, 400000, g_rank);
  reset(b, 33 * 4);
  NCCL_OK(all_reduce(a, b, 33, ncclInt32, ncclMax, comm, NULL));
  check_reduced(b, 33, ncclInt32, ncclMax, 400000, "pncclAllReduce");
  int n = -1;
  NCCL_OK(count(comm, &n));
  if (n != g_nranks)
    FAIL("pncclCommCount gave %d", n);
  if (strcmp(error_string(ncclRemoteError), ncclGetErrorString(ncclRemoteError)) != 0)
    FAIL("pncclGetErrorString differs");
  if (all_reduce(a, b, 1, (ncclDataType_t)99, ncclSum, comm, NULL) != ncclInvalidArgument ||
      strstr(last_error(NULL), "datatype") == NULL)
    FAIL("pncclAllReduce of datatype 99: '%s'", last_error(NULL));
  int right = (g_rank + 1) % g_nranks, left = (g_rank + g_nranks - 1) % g_nranks;
  fill_moved(a, 40, 400001, g_rank, 0);
  reset(b, 40);
  NCCL_OK(group_start());
  NCCL_OK(send(a, 10, ncclFloat32, right, comm, NULL));
  NCCL_OK(recv(b, 10, ncclFloat32, left, comm, NULL));
  NCCL_OK(group_end());
  check_moved(b, 40, 400001, left, 0, "pncclSend/pncclRecv ring");
  dlclose(lib);
}

/* ---- main */

static void exchange_id(const char *path, ncclUniqueId *id);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* ncclCommAbort of a communicator whose non-blocking init is still pending
 * ends it at once: every rank of this job joins a communicator of one rank
 * more, which never comes; rank 0 aborts its init once the others' inits are
 * under way. Its abort returns at once (not after SYMCOMM_TIMEOUT, which
 * test_nccl_shim.sh sets to 30 s), and the others' inits fail within
 * moments with a sentence naming rank 0, instead of waiting for the rank
 * that never comes. Rank 0 runs it with stdin closed, so that the eventfd
 * its init thread watches is fd 0 (which, as config.abort_fd, means none). */
static void test_abort_pending_init(const char *base) {
  char path[4096];
  snprintf(path, sizeof(path), "%s.abort", base);
  ncclUniqueId id;
  if (g_rank == 0)
    NCCL_OK(ncclGetUniqueId(&id));
  exchange_id(path, &id);
  ncclComm_t comm = NULL;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  if (g_rank == 0)
    close(0);
  ncclResult_t res = ncclCommInitRankConfig(&comm, g_nranks + 1, id, g_rank, &cfg);
  if (res != ncclInProgress)
    FAIL("non-blocking init of a rank that never comes: %s: %s", ncclGetErrorString(res),
         ncclGetLastError(NULL));
  if (g_rank != 0) {
    snprintf(path, sizeof(path), "%s.joined.%d", base, g_rank);
    FILE *f = fopen(path, "w");
    if (f == NULL || fclose(f) != 0)
      FAIL("cannot write %s", path);
    ncclResult_t state = ncclInProgress;
    double start = now_s();
    while (state == ncclInProgress && now_s() - start < 20) {
      NCCL_OK(ncclCommGetAsyncError(comm, &state));
      usleep(10000);
    }
    const char *why = ncclGetLastError(NULL);
    if (state == ncclInProgress || state == ncclSuccess)
      FAIL("init still %s 20 s after rank 0 aborted its own", ncclGetErrorString(state));
    if (strstr(why, "rank 0") == NULL)
      FAIL("init failed (%s) with '%s', which does not name rank 0", ncclGetErrorString(state), why);
    printf("rank %d: init failed after %.1f s: %s\n", g_rank, now_s() - start, why);
    NCCL_OK(ncclCommDestroy(comm));
    return;
  }
  for (int r = 1; r < g_nranks; r++) {
    snprintf(path, sizeof(path), "%s.joined.%d", base, r);
    for (int tries = 0; !file_exists(path); tries++)
      if (tries > 6000)
        FAIL("rank %d never started its init", r);
      else
        usleep(10000);
  }
  usleep(300000); /* their inits reach the root */
  ncclResult_t state = ncclSuccess;
  NCCL_OK(ncclCommGetAsyncError(comm, &state));
  if (state != ncclInProgress)
    FAIL("init of %d ranks of %d ended (%s) before the abort", g_nranks, g_nranks + 1,
         ncclGetErrorString(state));
  double start = now_s();
  NCCL_OK(ncclCommAbort(comm));
  double took = now_s() - start;
  if (took > 5)
    FAIL("ncclCommAbort of a pending init took %.1f s", took);
  NCCL_REFUSED(ncclInvalidArgument, "not a live communicator", ncclCommGetAsyncError(comm, &state));
  printf("rank 0: abort of a pending init returned in %.3f s\n", took);
}

/* A float32 sum of n elements from a into b (reset first), checked. */
static void sum_checked(ncclComm_t comm, float *a, float *b, size_t n, int seed, const char *what) {
  reset(b, n * sizeof(float));
  fill_reduce(a, n, ncclFloat32, ncclSum, seed, g_rank);
  NCCL_OK(ncclAllReduce(a, b, n, ncclFloat32, ncclSum, comm, NULL));
  check_reduced(b, n, ncclFloat32, ncclSum, seed, what);
}

/* config.maxCTAs = cap (SHIM_TEST_MAX_CTAS): float32 sums from 8 B to 8 MiB,
 * checked; a split that leaves maxCTAs unset keeps the cap, one that asks
 * another is refused, and a cap below 1 is refused at init. That the blocks
 * stayed within the cap the script reads in the INFO lines of the choices. */
static void test_max_ctas(ncclUniqueId id, int cap) {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  ncclComm_t comm = NULL, child = NULL;
  cfg.maxCTAs = 0;
  NCCL_REFUSED(ncclInvalidArgument, "config.maxCTAs is 0",
               ncclCommInitRankConfig(&comm, g_nranks, id, g_rank, &cfg));
  cfg.maxCTAs = cap;
  NCCL_OK(ncclCommInitRankConfig(&comm, g_nranks, id, g_rank, &cfg));
  size_t most = (size_t)8 << 20;
  float *a = malloc(most), *b = malloc(most);
  if (a == NULL || b == NULL)
    FAIL("no memory");
  int seed = 500000;
  for (size_t bytes = 8; bytes <= most; bytes *= 4)
    sum_checked(comm, a, b, bytes / sizeof(float), ++seed, "all-reduce under maxCTAs");
  ncclConfig_t split = NCCL_CONFIG_INITIALIZER;
  split.maxCTAs = cap > 1 ? cap - 1 : 2;
  NCCL_REFUSED(ncclInvalidUsage, "the parent's is", ncclCommSplit(comm, 0, g_rank, &child, &split));
  /* Above 128 caps nothing: refused under a smaller cap, naming what was
   * asked; under 128 (every block) the same cap, so kept. */
  split.maxCTAs = 150;
  if (cap < 128) {
    char said[96];
    snprintf(said, sizeof(said), "config.maxCTAs is 150, but the parent's is %d", cap);
    NCCL_REFUSED(ncclInvalidUsage, said, ncclCommSplit(comm, 0, g_rank, &child, &split));
  } else {
    NCCL_OK(ncclCommSplit(comm, 0, g_rank, &child, &split));
    NCCL_OK(ncclCommDestroy(child));
    child = NULL;
  }
  split.maxCTAs = NCCL_CONFIG_UNDEF_INT;
  NCCL_OK(ncclCommSplit(comm, 0, g_rank, &child, &split));
  sum_checked(child, a, b, most / sizeof(float), ++seed, "all-reduce on a split under maxCTAs");
  NCCL_OK(ncclCommDestroy(child));
  NCCL_OK(ncclCommDestroy(comm));
  free(a);
  free(b);
  printf("rank %d: maxCTAs %d: all-reduces and a split ok\n", g_rank, cap);
}

static void exchange_id(const char *path, ncclUniqueId *id) {
  if (g_rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0)
      FAIL("cannot write %s", path);
    return;
  }
  for (int tries = 0; tries < 6000; tries++) {
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
      size_t got = fread(id, sizeof(*id), 1, f);
      fclose(f);
      if (got == 1)
        return;
    }
    usleep(10000);
  }
  FAIL("no unique id in %s", path);
}

int main(int argc, char **argv) {
  const char *r = getenv("SYMCOMM_RANK"), *n = getenv("SYMCOMM_WORLD_SIZE");
  if (argc != 2 || r == NULL || n == NULL) {
    fprintf(stderr, "usage: symcomm-run -n N -- test_nccl_shim ID-FILE\n");
    return 2;
  }
  g_rank = atoi(r);
  g_nranks = atoi(n);
  int version = 0;
  NCCL_OK(ncclGetVersion(&version));
  if (version != NCCL_VERSION_CODE)
    FAIL("ncclGetVersion gave %d, the header says %d", version, NCCL_VERSION_CODE);
  ncclUniqueId id;
  if (g_rank == 0)
    NCCL_OK(ncclGetUniqueId(&id));
  exchange_id(argv[1], &id);
  if (getenv("SHIM_TEST_MAX_CTAS") != NULL) {
    test_max_ctas(id, atoi(getenv("SHIM_TEST_MAX_CTAS")));
    return 0;
  }

  /* a non-blocking init: in progress, then ready */
  ncclComm_t comm = NULL;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  cfg.commName = "nccl-shim-test";
  ncclResult_t res = ncclCommInitRankConfig(&comm, g_nranks, id, g_rank, &cfg);
  if (res != ncclInProgress && res != ncclSuccess)
    FAIL("non-blocking init: %s: %s", ncclGetErrorString(res), ncclGetLastError(NULL));
  ncclResult_t state = ncclInProgress;
  int polls = 0;
  while (state == ncclInProgress) {
    NCCL_OK(ncclCommGetAsyncError(comm, &state));
    polls++;
    usleep(1000);
  }
  if (state != ncclSuccess)
    FAIL("non-blocking init ended with %s: %s", ncclGetErrorString(state), ncclGetLastError(comm));
  int count = 0, me = -1, dev = -2;
  NCCL_OK(ncclCommCount(comm, &count));
  NCCL_OK(ncclCommUserRank(comm, &me));
  NCCL_OK(ncclCommCuDevice(comm, &dev));
  if (count != g_nranks || me != g_rank || dev < 0)
    FAIL("queries: %d ranks, rank %d, device %d", count, me, dev);

  size_t max = counts[NCOUNTS - 1] * 8 * (size_t)g_nranks;
  unsigned char *a = malloc(max), *b = malloc(max);
  if (a == NULL || b == NULL)
    FAIL("no memory");
  test_reductions(comm, a, b);
  printf("rank %d: reductions ok\n", g_rank);
  test_moves(comm, a, b);
  printf("rank %d: broadcast, all-gather, all-to-all, gather, scatter ok\n", g_rank);
  test_p2p(comm, a, b);
  printf("rank %d: send/recv ok\n", g_rank);
  test_bad_input(comm, a, b, id);
  printf("rank %d: bad input refused\n", g_rank);
  test_split_and_windows(comm, a, b);
  printf("rank %d: split, memory, windows ok\n", g_rank);
  test_failures(comm, a, b);
  printf("rank %d: failures in groups, an abort from a thread, ncclMemFree refused ok\n", g_rank);
  test_profiling_twins(comm, a, b);
  printf("rank %d: pncclXxx twins ok\n", g_rank);
  test_abort_pending_init(argv[1]);
  if (g_rank == 0) {
    test_one_process();
    printf("rank 0: two ranks in one process (one group; ncclCommInitAll) ok\n");
  }
  /* nccl-tests frees its ncclMemAlloc buffers after destroying the
   * communicators: the memory is still there until then */
  void *late = NULL;
  NCCL_OK(ncclMemAlloc(&late, 4096));
  test_memory_outlives(comm);
  printf("rank %d: ncclMemAlloc memory in a window of a later split, after its communicator ok\n",
         g_rank);
  fill_moved(late, 4096, 73, g_rank, 0);
  check_moved(late, 4096, 73, g_rank, 0, "ncclMemAlloc memory after every communicator is gone");
  NCCL_OK(ncclMemFree(late));
  NCCL_REFUSED(ncclInvalidArgument, "ncclMemAlloc", ncclMemFree(late));
  free(a);
  free(b);
  printf("rank %d: ok (init polled %d times)\n", g_rank, polls);
  return 0;
}
