/* Collectives, checked bit for bit on every rank, under symcomm-run:
 *   test_coll matrix      every collective x dtype x op x in/out-of-place at
 *                         counts 0, 1, 1023 and 65537, every root for rooted ones
 *   test_coll large       a sample at about 4 MiB and more (chunked algorithms)
 *   test_coll blocks      every collective at counts from 0 to 70001 (run with
 *                         SYMCOMM_COLL_BLOCKS and a small scratch: blocks with
 *                         nothing to do, slices that end short, many rounds)
 *   test_coll huge        every collective once in and once out of place with
 *                         its largest buffer about 256 MiB (for GPU runs:
 *                         tests/gpu/run.sh; too slow for the simulated GPUs' CI)
 *   test_coll algos       all-reduce in every dtype x op at sizes on both sides
 *                         of the one-shot limit (run with SYMCOMM_ALGO forced by
 *                         tests/scripts/test_coll_forced.sh, which checks the
 *                         log for the algorithm that ran)
 *   test_coll each        every collective once in and once out of place, small
 *                         (70 ranks on 70 hosts: steps of more than 128 ops)
 *   test_coll many        1,000 small collectives of every kind queued back to
 *                         back, each with its own inputs and output, all checked
 *   test_coll order       inputs that are not exact in float: every rank gets
 *                         the same bits, those of reducing in rank order
 *   test_coll concurrent  two split communicators running collectives at once
 *                         on different streams
 *   test_coll args        bad arguments fail before anything is queued
 *   test_coll mismatch    ranks calling different counts fail (and with
 *                         SYMCOMM_CHECK=1 the sentence names both calls)
 *   test_coll windows     all-reduce on buffers that are windows (used in place,
 *                         nothing staged), and windows at offsets that differ
 *   test_coll window_any_offset  buffers at offsets that differ from rank to
 *                         rank in a SYMCOMM_WINDOW_ANY_OFFSET window, or in a
 *                         window on some ranks only: every collective stages
 *   test_coll window_same_offset  the same calls in a window registered
 *                         without flags, at the same offset everywhere (on
 *                         the window, past an any-offset window that holds
 *                         rank 0's input only); offsets that differ:
 *                         "disagree" (one host: between hosts collectives
 *                         never run on windows)
 *   test_coll group       a group mixing collectives with sends and receives
 *   test_coll choices     ranks whose all-reduce choices differ (rank 0 forces
 *                         another algorithm, then uses a window where the
 *                         others do not) fail instead of mixing steps
 *   test_coll stopped     after a collective failed on one stream, the next on
 *                         another stream is refused at once (the device's
 *                         failure word, no stream asked), or, queued before
 *                         the failure was known, fails with it, not at the
 *                         timeout
 *   test_coll slow_order  a collective queued behind a long run of them on
 *                         another stream waits as long as they progress, even
 *                         past the timeout in all (3 s timeout, 5 s of work)
 * Every call has its own inputs, a function of (the call's seed, the rank, the
 * element's index) (tests/common/test_data.h): small integers for reductions,
 * so that every result is exact in every type and any summation order (the
 * reference follows the documented semantics: integers wrap, AVG truncates,
 * fp16/bf16 accumulate in float and round once), random bits for collectives
 * that only move data. Outputs start as a sentinel; every element is checked,
 * and so are the guard bytes around every buffer, the inputs of out-of-place
 * calls (unchanged), and a non-root's receive buffer of reduce (untouched).
 *
 * The same program runs on both backends: buffers come from the rank's
 * device (tests/common/test_device.h; GPU memory on "cuda"); inputs are made
 * and results checked in a host copy, moved before each call and after its
 * synchronize. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

static symcomm_comm_t comm;
static symcomm_stream_t stream;
static int rank, nranks;
static uint64_t calls; /* seeds: every rank makes the same calls */

static uint64_t next_seed(void) { return ++calls * 7919u; }

static const symcomm_dtype_t all_dtypes[] = {
    SYMCOMM_INT8,    SYMCOMM_UINT8,    SYMCOMM_INT32,   SYMCOMM_UINT32,  SYMCOMM_INT64,
    SYMCOMM_UINT64,  SYMCOMM_FLOAT16,  SYMCOMM_BFLOAT16, SYMCOMM_FLOAT32, SYMCOMM_FLOAT64};
static const symcomm_op_t all_ops[] = {SYMCOMM_SUM, SYMCOMM_PROD, SYMCOMM_MIN, SYMCOMM_MAX, SYMCOMM_AVG};
enum { NDTYPES = sizeof(all_dtypes) / sizeof(all_dtypes[0]), NOPS = sizeof(all_ops) / sizeof(all_ops[0]) };

#define SYNC() TEST_OK(symcomm_stream_synchronize(stream))

/* ---- one collective call: its arguments, buffers and checks */

typedef enum { K_ALLREDUCE, K_REDUCE, K_REDUCESCATTER, K_BROADCAST, K_ALLGATHER, K_ALLTOALL, K_COUNT } kind_t;
static const char *const kind_names[K_COUNT] = {"allreduce", "reduce",    "reducescatter",
                                                "broadcast", "allgather", "alltoall"};

typedef struct coll_case {
  kind_t kind;
  symcomm_dtype_t t;
  symcomm_op_t op; /* reductions only */
  size_t count;    /* as the API counts it */
  int root;        /* reduce, broadcast */
  bool inplace;
  uint64_t seed;
  size_t sz;
  tdev_buf_t send, recv;
  char what[160];
} coll_case_t;

static bool reduces(kind_t k) { return k == K_ALLREDUCE || k == K_REDUCE || k == K_REDUCESCATTER; }

/* Elements of the send buffer (the input of in-place all-gather lives in recv). */
static size_t send_elems(const coll_case_t *c) {
  size_t n = (size_t)nranks;
  if (c->kind == K_REDUCESCATTER || c->kind == K_ALLTOALL)
    return c->count * n;
  return c->kind == K_ALLGATHER && c->inplace ? 0 : c->count;
}

static size_t recv_elems(const coll_case_t *c) {
  if (c->inplace && c->kind != K_ALLGATHER)
    return 0;
  return c->kind == K_ALLGATHER || c->kind == K_ALLTOALL ? c->count * (size_t)nranks : c->count;
}

/* A buffer as calls see it (dev) or its host copy. */
static unsigned char *at(tdev_buf_t *b, bool dev) { return dev ? b->data : b->host.data; }

/* This rank's input: count elements, or nranks blocks of count. */
static unsigned char *input_of(coll_case_t *c, bool dev) {
  if (c->kind == K_ALLGATHER && c->inplace)
    return at(&c->recv, dev) + (size_t)rank * c->count * c->sz;
  return at(&c->send, dev);
}

static size_t input_elems(const coll_case_t *c) {
  return c->kind == K_REDUCESCATTER || c->kind == K_ALLTOALL ? c->count * (size_t)nranks : c->count;
}

static unsigned char *output_of(coll_case_t *c, bool dev) {
  if (!c->inplace || c->kind == K_ALLGATHER)
    return at(&c->recv, dev);
  if (c->kind == K_REDUCESCATTER)
    return at(&c->send, dev) + (size_t)rank * c->count * c->sz;
  return at(&c->send, dev);
}

/* The input of rank r, elements [0, n). */
static void make_input(const coll_case_t *c, void *buf, int r, size_t n) {
  if (!reduces(c->kind)) {
    td_fill_elems(buf, n, c->t, c->seed, r, 0);
    return;
  }
  td_fill_small(buf, n, c->t, c->op, c->seed, r, 0);
}

static void check_input_unchanged(coll_case_t *c) {
  size_t bytes = input_elems(c) * c->sz;
  unsigned char *want = malloc(bytes + 1);
  TEST_ASSERT(want != NULL);
  make_input(c, want, rank, input_elems(c));
  const unsigned char *have = input_of(c, false);
  if (memcmp(have, want, bytes) != 0)
    for (size_t i = 0; i < bytes; i++)
      TEST_ASSERT(have[i] == want[i], "%s: byte %zu of the input changed", c->what, i);
  free(want);
}

/* Buffers with guards; outputs the sentinel, inputs filled. */
static void case_prepare(coll_case_t *c, kind_t kind, symcomm_dtype_t t, symcomm_op_t op,
                         size_t count, int root, bool inplace) {
  memset(c, 0, sizeof(*c));
  c->kind = kind;
  c->t = t;
  c->op = reduces(kind) ? op : SYMCOMM_SUM;
  c->count = count;
  c->root = root;
  c->inplace = inplace;
  c->seed = next_seed();
  c->sz = td_dtype_size(t);
  /* Aligned to the element, not more, and differently on each side. */
  c->send = tdev_buf_alloc(send_elems(c) * c->sz, c->sz * (c->seed % 4));
  c->recv = tdev_buf_alloc(recv_elems(c) * c->sz, c->sz * ((c->seed / 4) % 4));
  snprintf(c->what, sizeof(c->what), "%s %s%s%s count %zu root %d %s (seed %llu)", kind_names[kind],
           symcomm_dtype_string(t), reduces(kind) ? " " : "",
           reduces(kind) ? symcomm_op_string(op) : "", count, root,
           inplace ? "in place" : "out of place", (unsigned long long)c->seed);
  make_input(c, input_of(c, false), rank, input_elems(c));
  tdev_buf_push(c->kind == K_ALLGATHER && c->inplace ? &c->recv : &c->send);
}

static void case_enqueue(coll_case_t *c, symcomm_comm_t on, symcomm_stream_t s) {
  void *in = input_of(c, true), *out = output_of(c, true);
  switch (c->kind) {
  case K_ALLREDUCE: TEST_OK(symcomm_allreduce(in, out, c->count, c->t, c->op, on, s)); break;
  case K_REDUCE: TEST_OK(symcomm_reduce(in, out, c->count, c->t, c->op, c->root, on, s)); break;
  case K_REDUCESCATTER: TEST_OK(symcomm_reducescatter(in, out, c->count, c->t, c->op, on, s)); break;
  case K_BROADCAST: /* other ranks' sendbuf may be NULL: nothing reads it */
    TEST_OK(symcomm_broadcast(rank == c->root || c->inplace ? in : NULL, out, c->count, c->t, c->root,
                              on, s));
    break;
  case K_ALLGATHER: TEST_OK(symcomm_allgather(in, out, c->count, c->t, on, s)); break;
  case K_ALLTOALL: TEST_OK(symcomm_alltoall(in, out, c->count, c->t, on, s)); break;
  default: TEST_ASSERT(0);
  }
}

static void case_check(coll_case_t *c) {
  tdev_buf_pull(&c->send);
  tdev_buf_pull(&c->recv);
  const unsigned char *out = output_of(c, false);
  size_t block = c->count * c->sz;
  char what[200];
  switch (c->kind) {
  case K_ALLREDUCE:
    td_check_reduced(out, c->count, c->t, c->op, c->seed, 0, nranks, c->what);
    break;
  case K_REDUCE:
    if (rank == c->root)
      td_check_reduced(out, c->count, c->t, c->op, c->seed, 0, nranks, c->what);
    else if (!c->inplace) /* recvbuf matters on the root only: nobody writes it */
      td_check_untouched(out, block, c->what);
    else
      check_input_unchanged(c);
    break;
  case K_REDUCESCATTER:
    td_check_reduced(out, c->count, c->t, c->op, c->seed, (uint64_t)rank * c->count, nranks, c->what);
    break;
  case K_BROADCAST:
    td_check_elems(out, c->count, c->t, c->seed, c->root, 0, c->what);
    break;
  case K_ALLGATHER:
  case K_ALLTOALL:
    for (int r = 0; r < nranks; r++) {
      snprintf(what, sizeof(what), "%s: block of rank %d", c->what, r);
      uint64_t first = c->kind == K_ALLTOALL ? (uint64_t)rank * c->count : 0;
      td_check_elems(out + (size_t)r * block, c->count, c->t, c->seed, r, first, what);
    }
    break;
  default: TEST_ASSERT(0);
  }
  if (!c->inplace)
    check_input_unchanged(c);
  snprintf(what, sizeof(what), "%s: send buffer", c->what);
  td_check_guards(c->send.host.data, c->send.host.bytes, what);
  snprintf(what, sizeof(what), "%s: receive buffer", c->what);
  td_check_guards(c->recv.host.data, c->recv.host.bytes, what);
  tdev_buf_free(&c->send);
  tdev_buf_free(&c->recv);
}

/* One call, synchronised and checked. */
static void run_case(kind_t kind, symcomm_dtype_t t, symcomm_op_t op, size_t count, int root,
                     bool inplace) {
  coll_case_t c;
  case_prepare(&c, kind, t, op, count, root, inplace);
  case_enqueue(&c, comm, stream);
  SYNC();
  case_check(&c);
}

/* One collective of each kind at `count`, out of place and in place. */
static void run_one(symcomm_dtype_t t, symcomm_op_t op, size_t count, int root) {
  for (int inplace = 0; inplace <= 1; inplace++)
    for (kind_t k = 0; k < K_COUNT; k++)
      if (reduces(k) || op == SYMCOMM_SUM) /* the data-moving ones do not depend on op */
        run_case(k, t, op, count, root, inplace);
}

static void test_matrix(void) {
  const size_t counts[] = {0, 1, 1023, 65537};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
    for (size_t d = 0; d < NDTYPES; d++)
      for (size_t o = 0; o < NOPS; o++) {
        /* The largest count on a sample of types, to keep CI quick. */
        if (counts[c] == 65537 && d % 3 != 0)
          continue;
        run_one(all_dtypes[d], all_ops[o], counts[c], (int)(c + d + o) % nranks);
      }
  /* Every root of the rooted collectives. */
  for (int root = 0; root < nranks; root++) {
    run_case(K_BROADCAST, SYMCOMM_INT32, SYMCOMM_SUM, 1023, root, false);
    run_case(K_BROADCAST, SYMCOMM_UINT8, SYMCOMM_SUM, 1023, root, true);
    run_case(K_REDUCE, SYMCOMM_INT32, SYMCOMM_SUM, 1023, root, false);
    run_case(K_REDUCE, SYMCOMM_FLOAT16, SYMCOMM_MAX, 1023, root, true);
  }
}

static void test_large(void) {
  run_one(SYMCOMM_FLOAT32, SYMCOMM_SUM, (1u << 20) + 3, 0);    /* ~4 MiB of float32 */
  run_one(SYMCOMM_BFLOAT16, SYMCOMM_MAX, (2u << 20) + 5, nranks - 1);
  run_one(SYMCOMM_INT8, SYMCOMM_PROD, (4u << 20) + 1, 1 % nranks);
  run_one(SYMCOMM_FLOAT64, SYMCOMM_AVG, (1u << 20) + 7, 0);     /* 8 MiB: several chunks */
}

/* Every collective at counts that give a block of a launch nothing, a slice
 * shorter than the others, or (with a small scratch) many rounds. */
static void test_blocks(void) {
  const size_t counts[] = {0, 1, 17, 1000, 70001};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
    run_one(SYMCOMM_INT32, SYMCOMM_SUM, counts[c], (int)c % nranks);
    run_one(SYMCOMM_BFLOAT16, SYMCOMM_MAX, counts[c], (int)(c + 1) % nranks);
  }
}

/* Each collective in and out of place with its largest buffer about 256 MiB
 * (odd counts; the send buffer of reduce-scatter and all-to-all, the
 * receive buffer of all-gather hold nranks blocks). */
static void test_huge(void) {
  const size_t mib256 = (size_t)256 << 20, n = (size_t)nranks;
  for (int inplace = 0; inplace <= 1; inplace++) {
    run_case(K_ALLREDUCE, SYMCOMM_FLOAT32, SYMCOMM_SUM, mib256 / 4 + 3, 0, inplace);
    run_case(K_ALLREDUCE, SYMCOMM_BFLOAT16, SYMCOMM_MAX, mib256 / 2 - 1, 0, inplace);
    run_case(K_REDUCE, SYMCOMM_INT32, SYMCOMM_SUM, mib256 / 4 + 1, 1 % nranks, inplace);
    run_case(K_REDUCESCATTER, SYMCOMM_FLOAT32, SYMCOMM_AVG, mib256 / 4 / n + 1, 0, inplace);
    run_case(K_BROADCAST, SYMCOMM_FLOAT64, SYMCOMM_SUM, mib256 / 8 + 1, nranks - 1, inplace);
    run_case(K_ALLGATHER, SYMCOMM_INT64, SYMCOMM_SUM, mib256 / 8 / n + 1, 0, inplace);
    run_case(K_ALLTOALL, SYMCOMM_UINT32, SYMCOMM_SUM, mib256 / 4 / n + 3, 0, inplace);
  }
}

/* All-reduce only, at counts on both sides of the one-shot limit. */
static void test_algos(void) {
  const size_t counts[] = {1, 1023, 65537};
  for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
    for (size_t d = 0; d < NDTYPES; d++)
      for (size_t o = 0; o < NOPS; o++)
        for (int inplace = 0; inplace <= 1; inplace++)
          run_case(K_ALLREDUCE, all_dtypes[d], all_ops[o], counts[c], 0, inplace);
}

/* Every kind once out of place and once in place, small (many ranks: one
 * per host beyond a NET launch's 128 ops per step). */
static void test_each(void) {
  for (int k = 0; k < K_COUNT; k++)
    for (int inplace = 0; inplace <= 1; inplace++)
      run_case((kind_t)k, inplace ? SYMCOMM_FLOAT32 : SYMCOMM_INT32,
               inplace ? SYMCOMM_AVG : SYMCOMM_SUM, 5, inplace ? 0 : nranks - 1, inplace);
}

/* 1,000 small collectives of every kind, type and op, queued without a
 * synchronisation in between; each has its own inputs and output. */
static void test_many(void) {
  enum { N = 1000 };
  coll_case_t *cases = calloc(N, sizeof(coll_case_t));
  TEST_ASSERT(cases != NULL);
  for (int i = 0; i < N; i++) {
    kind_t k = (kind_t)(i % K_COUNT);
    size_t count = 1 + (size_t)(i / K_COUNT) % 3;
    case_prepare(&cases[i], k, all_dtypes[(i / 3) % NDTYPES], all_ops[(i / 7) % NOPS], count,
                 (i / K_COUNT) % nranks, i % 5 == 4);
    case_enqueue(&cases[i], comm, stream);
  }
  SYNC();
  for (int i = 0; i < N; i++)
    case_check(&cases[i]);
  free(cases);
}

/* ---- order: inputs whose sums round, so that the result depends on the
 * order of the reduction; every rank must get the bits of reducing in rank
 * order (docs/ARCHITECTURE.md), whatever the algorithm */

static double inexact_value(uint64_t seed, int r, size_t i, symcomm_dtype_t t) {
  uint64_t h = td_mix(seed, r, i);
  int e = (int)((h >> 1) % 13) - 6;
  int bits = t == SYMCOMM_FLOAT64 ? 52 : t == SYMCOMM_FLOAT32 ? 23 : 7;
  double m = 1.0 + ldexp((double)((h >> 8) & ((1ull << bits) - 1)), -bits);
  return (h & 1 ? -m : m) * ldexp(1.0, e);
}

static void order_case(kind_t kind, symcomm_dtype_t t, symcomm_op_t op, size_t count) {
  size_t n = (size_t)nranks, sz = td_dtype_size(t);
  size_t in_elems = kind == K_REDUCESCATTER ? count * n : count;
  uint64_t seed = next_seed();
  int root = nranks - 1;
  tdev_buf_t in = tdev_buf_alloc(in_elems * sz, 0), out = tdev_buf_alloc(count * sz, 0);
  for (size_t i = 0; i < in_elems; i++)
    td_store(in.host.data, t, i, inexact_value(seed, rank, i, t));
  tdev_buf_push(&in);
  if (kind == K_ALLREDUCE)
    TEST_OK(symcomm_allreduce(in.data, out.data, count, t, op, comm, stream));
  else if (kind == K_REDUCE)
    TEST_OK(symcomm_reduce(in.data, out.data, count, t, op, root, comm, stream));
  else
    TEST_OK(symcomm_reducescatter(in.data, out.data, count, t, op, comm, stream));
  SYNC();
  tdev_buf_pull(&out);
  const unsigned char *got = out.host.data;
  if (kind == K_REDUCE && rank != root) {
    td_check_untouched(got, count * sz, "reduce's output off the root");
  } else {
    size_t first = kind == K_REDUCESCATTER ? (size_t)rank * count : 0;
    for (size_t i = 0; i < count; i++) {
      unsigned char want[8];
      if (t == SYMCOMM_FLOAT64) {
        double acc = inexact_value(seed, 0, first + i, t);
        for (int r = 1; r < nranks; r++)
          acc += inexact_value(seed, r, first + i, t);
        if (op == SYMCOMM_AVG)
          acc /= nranks;
        memcpy(want, &acc, 8);
      } else { /* float32, and bfloat16 accumulating in float */
        float acc = (float)inexact_value(seed, 0, first + i, t);
        for (int r = 1; r < nranks; r++)
          acc += (float)inexact_value(seed, r, first + i, t);
        if (op == SYMCOMM_AVG)
          acc /= (float)nranks;
        td_store(want, t, 0, acc);
      }
      TEST_ASSERT(memcmp(got + i * sz, want, sz) == 0,
                  "%s %s %s count %zu: element %zu differs from the rank-order reduction",
                  kind_names[kind], symcomm_dtype_string(t), symcomm_op_string(op), count, i);
    }
  }
  td_check_guards(got, count * sz, "order");
  tdev_buf_free(&in);
  tdev_buf_free(&out);
}

static void test_order(void) {
  const symcomm_dtype_t types[] = {SYMCOMM_FLOAT32, SYMCOMM_FLOAT64, SYMCOMM_BFLOAT16};
  const size_t counts[] = {1023, 65537}; /* one-shot and two-shot all-reduce */
  for (size_t t = 0; t < 3; t++)
    for (size_t c = 0; c < 2; c++) {
      order_case(K_ALLREDUCE, types[t], SYMCOMM_SUM, counts[c]);
      order_case(K_ALLREDUCE, types[t], SYMCOMM_AVG, counts[c]);
      order_case(K_REDUCE, types[t], SYMCOMM_SUM, counts[c]);
      order_case(K_REDUCESCATTER, types[t], SYMCOMM_SUM, counts[c]);
    }
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
  tdev_buf_t a = tdev_buf_alloc(N * 4, 0), b = tdev_buf_alloc(N * 4, 0), c = tdev_buf_alloc(N * 4, 0),
             d = tdev_buf_alloc(N * 4, 0);
  for (int round = 0; round < 20; round++) {
    uint64_t world_seed = next_seed(), half_seed = next_seed();
    for (size_t i = 0; i < N; i++) {
      ((int32_t *)a.host.data)[i] = (int32_t)td_small_value(world_seed, rank, i, SYMCOMM_SUM, SYMCOMM_INT32);
      ((int32_t *)c.host.data)[i] = (int32_t)td_small_value(half_seed, hr, i, SYMCOMM_MAX, SYMCOMM_INT32);
    }
    td_reset(b.host.data, N * 4);
    td_reset(d.host.data, N * 4);
    tdev_buf_push(&a);
    tdev_buf_push(&b);
    tdev_buf_push(&c);
    tdev_buf_push(&d);
    /* On the world and on the half at the same time, on two streams. */
    TEST_OK(symcomm_allreduce(a.data, b.data, N, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
    TEST_OK(symcomm_allreduce(c.data, d.data, N, SYMCOMM_INT32, SYMCOMM_MAX, half, s2));
    SYNC();
    TEST_OK(symcomm_stream_synchronize(s2));
    tdev_buf_pull(&b);
    tdev_buf_pull(&d);
    td_check_reduced(b.host.data, N, SYMCOMM_INT32, SYMCOMM_SUM, world_seed, 0, nranks, "on the world");
    td_check_reduced(d.host.data, N, SYMCOMM_INT32, SYMCOMM_MAX, half_seed, 0, hn, "on the half");
    td_check_guards(b.host.data, N * 4, "on the world");
    td_check_guards(d.host.data, N * 4, "on the half");
  }
  tdev_buf_free(&a);
  tdev_buf_free(&b);
  tdev_buf_free(&c);
  tdev_buf_free(&d);
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_comm_destroy(half));
}

/* A send/recv that fails on the stream of an earlier collective, which had
 * finished, stops that stream only: a collective on another stream right
 * after runs on every rank, exact (it once was refused on the ranks of the
 * failed pair, and the others waited out the timeout). */
static void test_after_p2p(void) {
  TEST_ASSERT(nranks >= 3, "needs 3 ranks (a pair that fails and one that does not)");
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  enum { N = 1000 };
  tdev_buf_t a = tdev_buf_alloc(N * 4, 0), b = tdev_buf_alloc(N * 4, 0);
  for (int round = 0; round < 2; round++) {
    uint64_t seed = next_seed();
    for (size_t i = 0; i < N; i++)
      ((int32_t *)a.host.data)[i] = (int32_t)td_small_value(seed, rank, i, SYMCOMM_SUM, SYMCOMM_INT32);
    td_reset(b.host.data, N * 4);
    tdev_buf_push(&a);
    tdev_buf_push(&b);
    symcomm_stream_t first = round == 0 ? stream : s2, other = round == 0 ? s2 : stream;
    TEST_OK(symcomm_allreduce(a.data, b.data, N, SYMCOMM_INT32, SYMCOMM_SUM, comm, first));
    TEST_OK(symcomm_stream_synchronize(first));
    if (round == 0) { /* sizes that differ: both ends of the pair fail, and only its stream stops */
      symcomm_result_t r = SYMCOMM_OK;
      if (rank == 0) {
        TEST_OK(symcomm_send(a.data, 10, SYMCOMM_INT32, 1, comm, first));
        /* Eagerly (within a host), it ends at its put; the refusal reaches
         * the next send on the pair. */
        r = symcomm_stream_synchronize(first);
        if (r == SYMCOMM_OK)
          TEST_OK(symcomm_send(a.data, 10, SYMCOMM_INT32, 1, comm, first));
      } else if (rank == 1) {
        TEST_OK(symcomm_recv(b.data, 20, SYMCOMM_INT32, 0, comm, first));
      }
      if (r == SYMCOMM_OK)
        r = symcomm_stream_synchronize(first);
      TEST_EXPECT_RESULT(r, rank <= 1 ? SYMCOMM_ERR_INVALID_USAGE : SYMCOMM_OK);
      td_reset(b.host.data, N * 4);
      tdev_buf_push(&b);
    }
    double t0 = test_now();
    TEST_OK(symcomm_allreduce(a.data, b.data, N, SYMCOMM_INT32, SYMCOMM_SUM, comm, other));
    TEST_OK(symcomm_stream_synchronize(other));
    TEST_ASSERT(test_now() - t0 < 5, "the collective after the failed pair took %.1f s",
                test_now() - t0);
    tdev_buf_pull(&b);
    td_check_reduced(b.host.data, N, SYMCOMM_INT32, SYMCOMM_SUM, seed, 0, nranks, "after the pair failed");
    if (round == 0) { /* the stopped stream is done with: the next round runs on s2 first */
      TEST_OK(symcomm_stream_destroy(stream));
      TEST_OK(symcomm_stream_create(comm, &stream));
    }
  }
  tdev_buf_free(&a);
  tdev_buf_free(&b);
  TEST_OK(symcomm_stream_destroy(s2));
}

static void test_args(void) {
  float *buf = tdev_alloc(64 * sizeof(float));
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
  /* All-gather and reduce-scatter may overlap input and output only as in
   * place (this rank's block of the larger buffer); one element off is not. */
  TEST_ASSERT(nranks <= 16);
  TEST_EXPECT_RESULT(symcomm_allgather(buf + 2 * rank + 1, buf, 2, SYMCOMM_FLOAT32, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "overlap"));
  TEST_EXPECT_RESULT(symcomm_reducescatter(buf, buf + 2 * rank + 1, 2, SYMCOMM_FLOAT32, SYMCOMM_SUM,
                                           comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "overlap"));
  TEST_EXPECT_RESULT(symcomm_allreduce(buf, buf, 4, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, NULL),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  /* Nothing was queued: a real collective still works and agrees everywhere. */
  TEST_OK(symcomm_stream_query(stream));
  run_one(SYMCOMM_UINT32, SYMCOMM_MAX, 10, 0);
  tdev_free(buf);
}

static void test_mismatch(void) {
  int32_t *a = tdev_alloc(200 * sizeof(int32_t)), *b = tdev_alloc(200 * sizeof(int32_t));
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
  tdev_free(a);
  tdev_free(b);
}

/* Ranks that run different protocols for one call: the LL all-reduce on
 * every rank but the last, which calls a broadcast ("bcast") or an
 * all-reduce ("limit") too large for LL, both through barriers, and comes
 * late. Each side finds the other's tag (the LL rank's tag line, the
 * barrier rank's arrival and tag), so every rank fails at once with
 * "disagree", not at the timeout, also while the others stay. The same for
 * reduce: an LL reduce to rank 0 everywhere but on the last rank, which
 * reduces to rank 1 ("reduce_root", LL both: the tags differ; the root the
 * others name waits for lines the last rank sends elsewhere, and ranks that
 * need nothing but tags must not finish) or one too large for LL
 * ("reduce_limit", through barriers). */
static void test_mismatch_protocols(const char *how) {
  /* large: above any LL limit (SYMCOMM_LL_MAX_BYTES is at most 1 MiB; the
   * backends' defaults differ with the rank count). */
  size_t small = 16, large = (1u << 20) / sizeof(int32_t) + 1;
  int32_t *a = tdev_alloc(large * sizeof(int32_t)), *b = tdev_alloc(large * sizeof(int32_t));
  bool last = rank == nranks - 1;
  double t0 = test_now();
  symcomm_result_t r;
  if (last) /* the LL ranks' tag lines are there (their rings past) before it waits */
    usleep(200 * 1000);
  bool reduce = strncmp(how, "reduce", 6) == 0;
  if (!last && reduce)
    r = symcomm_reduce(a, b, small, SYMCOMM_INT32, SYMCOMM_SUM, 0, comm, stream);
  else if (!last)
    r = symcomm_allreduce(a, b, small, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
  else if (strcmp(how, "reduce_root") == 0)
    r = symcomm_reduce(a, b, small, SYMCOMM_INT32, SYMCOMM_SUM, 1, comm, stream);
  else if (strcmp(how, "reduce_limit") == 0)
    r = symcomm_reduce(a, b, large, SYMCOMM_INT32, SYMCOMM_SUM, 0, comm, stream); /* above LL */
  else if (strcmp(how, "bcast") == 0)
    r = symcomm_broadcast(a, b, large, SYMCOMM_INT32, 0, comm, stream); /* above LL */
  else
    r = symcomm_allreduce(a, b, large, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  const char *why = symcomm_last_error(comm);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE && test_contains(why, "disagree"),
              "rank %d (%s): %s after %.1f s: %s", rank, how, symcomm_result_string(r),
              test_now() - t0, why);
  /* Every rank stays in the communicator until all have failed (a split
   * needs them all): a rank that leaves would wake the others' waits, which
   * must find the disagreement without that. */
  symcomm_comm_t all;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &all));
  TEST_OK(symcomm_comm_destroy(all));
  TEST_ASSERT(test_now() - t0 < 20, "rank %d (%s): failing took %.1f s", rank, how, test_now() - t0);
  tdev_free(a);
  tdev_free(b);
}

/* All-reduce on window buffers, above the one-shot size so that the
 * in-place two-shot runs, in and out of place, in several types. */
static void test_windows(void) {
  const size_t counts[] = {70000, (1u << 20) + 3};
  const symcomm_dtype_t types[] = {SYMCOMM_FLOAT32, SYMCOMM_BFLOAT16, SYMCOMM_INT64, SYMCOMM_UINT8};
  void *mem = NULL;
  size_t cap = 2 * ((1u << 20) + 3) * 8 + 3 * 4096;
  TEST_OK(symcomm_mem_alloc(comm, cap, &mem));
  symcomm_window_t reg, alloc;
  TEST_OK(symcomm_window_register(comm, mem, cap, &reg));
  TEST_OK(symcomm_window_alloc(comm, cap, &alloc));
  char *win = symcomm_window_local(alloc);
  /* Host copies of both buffers: inputs, sentinels and guards are made there
   * and moved to the device around each call. */
  tdev_mirror_t mem_copy = tdev_mirror(mem, cap), win_copy = tdev_mirror(win, cap);
  for (size_t c = 0; c < 2; c++)
    for (size_t t = 0; t < 4; t++)
      for (int mode = 0; mode < 3; mode++) {
        size_t sz = td_dtype_size(types[t]), count = counts[c], bytes = count * sz;
        /* 0: in place in the registered buffer; 1: registered -> allocated
         * window; 2: allocated window at an offset, out of place within it.
         * Every buffer leaves room for guards around it. */
        char *send = mode == 2 ? win + 4096 : (char *)mem + TD_GUARD;
        char *recv = mode == 0 ? send : mode == 1 ? win + TD_GUARD : send + bytes + 4096;
        symcomm_op_t op = t == 3 ? SYMCOMM_MAX : SYMCOMM_SUM;
        uint64_t seed = next_seed();
        tdev_mirror_t *send_copy = mode == 2 ? &win_copy : &mem_copy;
        tdev_mirror_t *recv_copy = mode == 0 ? &mem_copy : &win_copy;
        unsigned char *hsend = tdev_host_of(send_copy, send), *hrecv = tdev_host_of(recv_copy, recv);
        td_fill_small(hsend, count, types[t], op, seed, rank, 0);
        td_arm_guards(hsend, bytes);
        if (recv != send) {
          td_reset(hrecv, bytes);
          td_arm_guards(hrecv, bytes);
        }
        tdev_mirror_push(send_copy, send - TD_GUARD, bytes + 2 * TD_GUARD);
        tdev_mirror_push(recv_copy, recv - TD_GUARD, bytes + 2 * TD_GUARD);
        TEST_OK(symcomm_allreduce(send, recv, count, types[t], op, comm, stream));
        SYNC();
        tdev_mirror_pull(send_copy, send - TD_GUARD, bytes + 2 * TD_GUARD);
        tdev_mirror_pull(recv_copy, recv - TD_GUARD, bytes + 2 * TD_GUARD);
        char what[96];
        snprintf(what, sizeof(what), "windows mode %d %s count %zu", mode,
                 symcomm_dtype_string(types[t]), count);
        td_check_reduced(hrecv, count, types[t], op, seed, 0, nranks, what);
        td_check_guards(hrecv, bytes, what);
        td_check_guards(hsend, bytes, what);
        if (recv != send) /* the input is unchanged */
          for (size_t i = 0; i < count; i++) {
            unsigned char want[8];
            td_store(want, types[t], 0, (double)td_small_value(seed, rank, i, op, types[t]));
            TEST_ASSERT(memcmp(hsend + i * sz, want, sz) == 0, "%s: input element %zu changed", what, i);
          }
      }
  tdev_mirror_free(&mem_copy);
  tdev_mirror_free(&win_copy);
  /* Offsets that differ between ranks cannot be read symmetrically: caught.
   * Above SC_COLL_PAIR_WINDOWS_MIN, so that 2 GPUs (one-shot through scratch
   * below it) read the windows too. */
  char *send = win + (rank == 0 ? 0 : 64);
  size_t odd_count = ((size_t)8 << 20) / sizeof(float) + 1024;
  TEST_ASSERT(64 + odd_count * sizeof(float) <= cap);
  symcomm_result_t r = symcomm_allreduce(send, send, odd_count, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree"), "%s", symcomm_last_error(comm));
  TEST_OK(symcomm_window_free(alloc));
  TEST_OK(symcomm_window_free(reg));
  TEST_OK(symcomm_mem_free(comm, mem));
}

/* All-gather, reduce-scatter and all-to-all on window buffers, above the LL
 * size so that they run on the windows (pushed into the peers' outputs, or
 * reduced from their inputs), out of place and in place in both forms (in
 * place, all-to-all and reduce-scatter go through the scratch), every
 * element of every block checked. */
enum { WK_ALLGATHER, WK_REDUCESCATTER, WK_ALLTOALL };
static void test_windows_kinds(void) {
  const size_t counts[] = {70000, 300001};
  const symcomm_dtype_t types[] = {SYMCOMM_FLOAT32, SYMCOMM_UINT8};
  const char *names[] = {"allgather", "reducescatter", "alltoall"};
  size_t n = (size_t)nranks, cap = n * 300001 * 4 + 2 * 4096;
  void *mem = NULL;
  TEST_OK(symcomm_mem_alloc(comm, cap, &mem));
  symcomm_window_t reg, alloc;
  TEST_OK(symcomm_window_register(comm, mem, cap, &reg));
  TEST_OK(symcomm_window_alloc(comm, cap, &alloc));
  char *win = symcomm_window_local(alloc);
  tdev_mirror_t mem_copy = tdev_mirror(mem, cap), win_copy = tdev_mirror(win, cap);
  for (size_t k = 0; k < 3; k++)
    for (size_t c = 0; c < 2; c++)
      for (size_t t = 0; t < 2; t++)
        for (int mode = 0; mode < 3; mode++) {
          int kind = (int)k;
          if (mode == 2 && kind == WK_ALLTOALL) /* in place already */
            continue;
          size_t sz = td_dtype_size(types[t]), count = counts[c], bytes = count * sz;
          size_t in_bytes = kind == WK_ALLGATHER ? bytes : n * bytes;
          size_t out_bytes = kind == WK_REDUCESCATTER ? bytes : n * bytes;
          /* 0: registered -> allocated window; 1: in place in the allocated
           * window (all-gather's input is its block of the output,
           * reduce-scatter's output its block of the input); 2: sendbuf ==
           * recvbuf (the input, or the output, at the start of the other). */
          char *send = mode == 0 ? (char *)mem + TD_GUARD : win + TD_GUARD;
          char *recv = mode == 0 ? win + TD_GUARD : send;
          if (mode == 1 && kind == WK_ALLGATHER)
            send = recv + (size_t)rank * bytes;
          if (mode == 1 && kind == WK_REDUCESCATTER)
            recv = send + (size_t)rank * bytes;
          char *base_in = mode == 0 ? send : kind == WK_ALLGATHER ? recv : send;
          char *base_out = mode == 0 ? recv : base_in;
          size_t span_in = mode == 0 ? in_bytes : in_bytes > out_bytes ? in_bytes : out_bytes;
          tdev_mirror_t *in_copy = mode == 0 ? &mem_copy : &win_copy;
          unsigned char *hsend = tdev_host_of(in_copy, send), *hrecv = tdev_host_of(&win_copy, recv);
          symcomm_op_t op = t == 1 ? SYMCOMM_MAX : SYMCOMM_SUM;
          uint64_t seed = next_seed();
          if (mode == 0) {
            td_reset(hrecv, out_bytes);
            td_arm_guards(hrecv, out_bytes);
          } else {
            td_reset(tdev_host_of(&win_copy, base_in), span_in);
            td_arm_guards(tdev_host_of(&win_copy, base_in), span_in);
          }
          if (kind == WK_REDUCESCATTER)
            td_fill_small(hsend, n * count, types[t], op, seed, rank, 0);
          else
            for (size_t q = 0; q < (kind == WK_ALLTOALL ? n : 1); q++)
              td_fill_elems(hsend + q * bytes, count, types[t], seed, rank, q * count);
          if (mode == 0) {
            td_arm_guards(hsend, in_bytes);
            tdev_mirror_push(in_copy, send - TD_GUARD, in_bytes + 2 * TD_GUARD);
          }
          tdev_mirror_push(&win_copy, (mode == 0 ? base_out : base_in) - TD_GUARD,
                           (mode == 0 ? out_bytes : span_in) + 2 * TD_GUARD);
          if (kind == WK_ALLGATHER)
            TEST_OK(symcomm_allgather(send, recv, count, types[t], comm, stream));
          else if (kind == WK_REDUCESCATTER)
            TEST_OK(symcomm_reducescatter(send, recv, count, types[t], op, comm, stream));
          else
            TEST_OK(symcomm_alltoall(send, recv, count, types[t], comm, stream));
          SYNC();
          tdev_mirror_pull(&win_copy, (mode == 0 ? base_out : base_in) - TD_GUARD,
                           (mode == 0 ? out_bytes : span_in) + 2 * TD_GUARD);
          char what[112];
          snprintf(what, sizeof(what), "windows %s mode %d %s count %zu", names[kind], mode,
                   symcomm_dtype_string(types[t]), count);
          if (kind == WK_REDUCESCATTER)
            td_check_reduced(hrecv, count, types[t], op, seed, (uint64_t)rank * count, nranks, what);
          else
            for (int r = 0; r < nranks; r++)
              td_check_elems(hrecv + (size_t)r * bytes, count, types[t], seed, r,
                             kind == WK_ALLTOALL ? (uint64_t)rank * count : 0, what);
          td_check_guards(tdev_host_of(&win_copy, mode == 0 ? base_out : base_in),
                          mode == 0 ? out_bytes : span_in, what);
          if (mode == 0) { /* the input is unchanged */
            tdev_mirror_pull(in_copy, send - TD_GUARD, in_bytes + 2 * TD_GUARD);
            td_check_guards(hsend, in_bytes, what);
            if (kind == WK_REDUCESCATTER)
              for (size_t i = 0; i < n * count; i++) {
                unsigned char want[8];
                td_store(want, types[t], 0, (double)td_small_value(seed, rank, i, op, types[t]));
                TEST_ASSERT(memcmp(hsend + i * sz, want, sz) == 0, "%s: input element %zu changed", what, i);
              }
            else
              for (size_t q = 0; q < in_bytes / bytes; q++)
                td_check_elems(hsend + q * bytes, count, types[t], seed, rank, q * count, what);
          }
        }
  tdev_mirror_free(&mem_copy);
  tdev_mirror_free(&win_copy);
  TEST_OK(symcomm_window_free(alloc));
  TEST_OK(symcomm_window_free(reg));
  TEST_OK(symcomm_mem_free(comm, mem));
}

/* Collectives run where they are called, in stream order; the group's sends
 * and receives are queued at its end: nothing waits on anything else. */
static void test_group(void) {
  /* One buffer: x, the sum, what came from the left, the all-gather's
   * output and one element past it. */
  enum { X, SUM, FROM_LEFT, GATHERED, ALL = GATHERED + 64 + 1 };
  int32_t h[ALL], *d = tdev_alloc(sizeof(h));
  int32_t *gathered = &h[GATHERED];
  int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  TEST_ASSERT(nranks <= 64);
  for (int round = 0; round < 3; round++) {
    uint64_t seed = next_seed();
    int32_t want = 0;
    for (int r = 0; r < nranks; r++)
      want += (int32_t)(td_mix(seed, r, 0) % 100000);
    td_reset(h, sizeof(h));
    h[X] = (int32_t)(td_mix(seed, rank, 0) % 100000);
    h[SUM] = h[FROM_LEFT] = -1;
    tdev_upload(d, h, sizeof(h));
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(&d[X], 1, SYMCOMM_INT32, right, comm, stream));
    TEST_OK(symcomm_allreduce(&d[X], &d[SUM], 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
    TEST_OK(symcomm_recv(&d[FROM_LEFT], 1, SYMCOMM_INT32, left, comm, stream));
    TEST_OK(symcomm_allgather(&d[X], &d[GATHERED], 1, SYMCOMM_INT32, comm, stream));
    TEST_OK(symcomm_group_end());
    SYNC();
    tdev_download(h, d, sizeof(h));
    int32_t sum = h[SUM], from_left = h[FROM_LEFT];
    TEST_ASSERT(sum == want, "round %d: sum %d, expected %d", round, sum, want);
    TEST_ASSERT(from_left == (int32_t)(td_mix(seed, left, 0) % 100000), "round %d: from the left %d",
                round, from_left);
    for (int r = 0; r < nranks; r++)
      TEST_ASSERT(gathered[r] == (int32_t)(td_mix(seed, r, 0) % 100000), "round %d: block %d", round, r);
    td_check_untouched(&gathered[nranks], sizeof(int32_t), "past the all-gather's output");
  }
  tdev_free(d);
}

static void expect_disagree(symcomm_result_t r) {
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree"), "%s", symcomm_last_error(comm));
}

/* Each rank's buffers at rank x 4096 bytes into a window registered with
 * SYMCOMM_WINDOW_ANY_OFFSET ("any"), then on odd ranks in memory that is no
 * window: all-reduce, all-gather, reduce-scatter and all-to-all above the LL
 * and one-shot sizes stage, and every element is right on every rank; so is
 * a ring of sends into the window. The same with the symmetric contract
 * ("same": a window registered without flags, every rank at 4096 bytes):
 * they run on the window, though an any-offset window of lower id holds
 * rank 0's input; and at offsets that differ, all-reduce fails on every
 * rank with "disagree". tests/scripts/test_window_offsets.sh checks the
 * logged paths. */
static void test_window_offsets(bool any_offset) {
  const char *names[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
  const size_t count = 400003; /* floats, above the one-shot size on 3 GPUs too */
  const symcomm_dtype_t t = SYMCOMM_FLOAT32;
  const symcomm_op_t op = SYMCOMM_SUM;
  size_t n = (size_t)nranks, bytes = count * sizeof(float), span = n * bytes;
  size_t mismatched = ((size_t)8 << 20) + 4096; /* all-reduce on 2 GPUs reads windows from 8 MiB */
  size_t need = 2 * span + 4 * TD_GUARD > mismatched ? 2 * span + 4 * TD_GUARD : mismatched;
  size_t cap = n * 4096 + need, shadow_bytes = 4096 + span + 2 * TD_GUARD;
  void *mem = NULL, *plain = tdev_alloc(cap);
  TEST_OK(symcomm_mem_alloc(comm, cap + shadow_bytes, &mem));
  /* "same" also has, registered first (a lower id), an any-offset window
   * that holds the input on rank 0 only (elsewhere it lies past the
   * buffers): ranks must pass it over alike, not stage on rank 0 alone. */
  symcomm_window_t win, shadow = NULL;
  if (!any_offset)
    TEST_OK(symcomm_window_register_flags(comm, (char *)mem + (rank == 0 ? 0 : cap), shadow_bytes,
                                          SYMCOMM_WINDOW_ANY_OFFSET, &shadow));
  TEST_OK(symcomm_window_register_flags(comm, mem, cap + shadow_bytes,
                                        any_offset ? SYMCOMM_WINDOW_ANY_OFFSET : 0, &win));
  tdev_mirror_t mem_copy = tdev_mirror(mem, cap), plain_copy = tdev_mirror(plain, cap);
  for (int layout = 0; layout < (any_offset ? 2 : 1); layout++) {
    bool in_plain = layout == 1 && rank % 2 == 1;
    tdev_mirror_t *copy = in_plain ? &plain_copy : &mem_copy;
    char *send = (char *)(in_plain ? plain : mem) + (any_offset ? (size_t)rank : 1) * 4096 + TD_GUARD;
    char *recv = send + span + 2 * TD_GUARD;
    unsigned char *hsend = tdev_host_of(copy, send), *hrecv = tdev_host_of(copy, recv);
    for (int k = 0; k < 4; k++) {
      size_t in_bytes = k == 2 || k == 3 ? span : bytes, out_bytes = k == 1 || k == 3 ? span : bytes;
      uint64_t seed = next_seed();
      char what[96];
      snprintf(what, sizeof(what), "%s, %s window, layout %d", names[k], any_offset ? "any-offset" : "symmetric",
               layout);
      if (k == 0 || k == 2)
        td_fill_small(hsend, in_bytes / sizeof(float), t, op, seed, rank, 0);
      else
        for (size_t q = 0; q < in_bytes / bytes; q++)
          td_fill_elems(hsend + q * bytes, count, t, seed, rank, q * count);
      td_arm_guards(hsend, in_bytes);
      td_reset(hrecv, out_bytes);
      td_arm_guards(hrecv, out_bytes);
      tdev_mirror_push(copy, send - TD_GUARD, 2 * span + 4 * TD_GUARD);
      if (k == 0)
        TEST_OK(symcomm_allreduce(send, recv, count, t, op, comm, stream));
      else if (k == 1)
        TEST_OK(symcomm_allgather(send, recv, count, t, comm, stream));
      else if (k == 2)
        TEST_OK(symcomm_reducescatter(send, recv, count, t, op, comm, stream));
      else
        TEST_OK(symcomm_alltoall(send, recv, count, t, comm, stream));
      SYNC();
      tdev_mirror_pull(copy, send - TD_GUARD, 2 * span + 4 * TD_GUARD);
      if (k == 0 || k == 2)
        td_check_reduced(hrecv, count, t, op, seed, k == 2 ? (uint64_t)rank * count : 0, nranks, what);
      else
        for (int r = 0; r < nranks; r++)
          td_check_elems(hrecv + (size_t)r * bytes, count, t, seed, r, k == 3 ? (uint64_t)rank * count : 0,
                         what);
      td_check_guards(hrecv, out_bytes, what);
      td_check_guards(hsend, in_bytes, what);
    }
    /* Receives into the window (straight from the sender) at offsets of their own. */
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    uint64_t seed = next_seed();
    td_fill_elems(hsend, count, t, seed, rank, 0);
    td_reset(hrecv, bytes);
    tdev_mirror_push(copy, send - TD_GUARD, 2 * span + 4 * TD_GUARD);
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(send, count, t, right, comm, stream));
    TEST_OK(symcomm_recv(recv, count, t, left, comm, stream));
    TEST_OK(symcomm_group_end());
    SYNC();
    tdev_mirror_pull(copy, recv, bytes);
    td_check_elems(hrecv, count, t, seed, left, 0, "a ring of sends into the window");
  }
  if (!any_offset) { /* the symmetric contract stays: offsets that differ are caught */
    char *odd = (char *)mem + (size_t)rank * 4096;
    expect_disagree(symcomm_allreduce(odd, odd, mismatched / sizeof(float), t, op, comm, stream));
  }
  tdev_mirror_free(&mem_copy);
  tdev_mirror_free(&plain_copy);
  TEST_OK(symcomm_window_free(win));
  if (shadow != NULL)
    TEST_OK(symcomm_window_free(shadow));
  TEST_OK(symcomm_mem_free(comm, mem));
  tdev_free(plain);
}

/* main set SYMCOMM_ALGO for rank 0 only. Each case needs a fresh
 * communicator: a failed collective leaves the ranks out of step. */
static void test_choices(void) {
  /* Above the one-shot size everywhere (GPUs: 4 MiB / ranks; 2 GPUs take
   * windows from 8 MiB): auto picks two-shot, and a window on rank 0 only
   * changes its choice. */
  enum { N = (8 << 20) / 4 + 1024 };
  float *a = tdev_alloc(N * sizeof(float)), *b = tdev_alloc(N * sizeof(float));
  float *ones = malloc(N * sizeof(float));
  TEST_ASSERT(ones != NULL);
  for (int i = 0; i < N; i++)
    ones[i] = 1.0f;
  expect_disagree(symcomm_allreduce(a, b, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream));
  symcomm_comm_t again;
  symcomm_stream_t s2;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &again));
  TEST_OK(symcomm_stream_create(again, &s2));
  symcomm_window_t w;
  TEST_OK(symcomm_window_alloc(again, N * sizeof(float), &w));
  float *in = rank == 0 ? symcomm_window_local(w) : a;
  tdev_upload(in, ones, N * sizeof(float));
  symcomm_result_t r = symcomm_allreduce(in, in, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, again, s2);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(s2);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "window on rank 0 only: got %s",
              symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(again), "disagree"), "%s", symcomm_last_error(again));
  TEST_OK(symcomm_window_free(w));
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_comm_destroy(again));
  tdev_free(a);
  tdev_free(b);
  free(ones);
}

/* A collective that fails (here: the ranks disagree) makes every later one
 * of the communicator fail, on any stream, without the host asking a stream:
 *  1. known failure: the program left its failure in host memory; the next
 *     call, on another stream, is refused by the call itself;
 *  2. failure not known yet when the next call is queued on another stream:
 *     that call waits for the failed one (an event), and fails at once when
 *     it does, with its sentence, not at the timeout. */
static void test_stopped(void) {
  int32_t *a = tdev_alloc(200 * sizeof(int32_t)), *b = tdev_alloc(200 * sizeof(int32_t));
  size_t count = rank == nranks - 1 ? 200 : 100;
  expect_disagree(symcomm_allreduce(a, b, count, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  double t0 = test_now();
  symcomm_result_t r = symcomm_allreduce(a, b, 100, SYMCOMM_INT32, SYMCOMM_SUM, comm, s2);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "earlier collective failed"), "%s",
              symcomm_last_error(comm));
  /* And it stays refused, on any stream. */
  TEST_EXPECT_RESULT(symcomm_broadcast(a, b, 1, SYMCOMM_INT32, 0, comm, s2),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_EXPECT_RESULT(symcomm_broadcast(a, b, 1, SYMCOMM_INT32, 0, comm, stream),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_now() - t0 < 20, "refusing took %.1f s", test_now() - t0);

  symcomm_comm_t fresh;
  symcomm_stream_t s3, s4;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &fresh));
  TEST_OK(symcomm_stream_create(fresh, &s3));
  TEST_OK(symcomm_stream_create(fresh, &s4));
  t0 = test_now();
  TEST_OK(symcomm_allreduce(a, b, count, SYMCOMM_INT32, SYMCOMM_SUM, fresh, s3));
  r = symcomm_allreduce(a, b, 100, SYMCOMM_INT32, SYMCOMM_SUM, fresh, s4);
  if (r == SYMCOMM_OK) /* queued before the failure was known: it follows it */
    r = symcomm_stream_synchronize(s4);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "the call behind a failed one: %s",
              symcomm_result_string(r));
  /* The host backend drops work behind a failure on its stream; on a GPU
   * the kernel runs and refuses itself (out of step). */
  TEST_ASSERT(test_contains(symcomm_last_error(fresh), "disagree") ||
                  test_contains(symcomm_last_error(fresh), "earlier collective failed") ||
                  test_contains(symcomm_last_error(fresh), "failed on this rank before it, so the "
                                                          "ranks are out of step"),
              "%s", symcomm_last_error(fresh));
  TEST_EXPECT_RESULT(symcomm_stream_synchronize(s3), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(fresh), "disagree"), "%s", symcomm_last_error(fresh));
  TEST_ASSERT(test_now() - t0 < 20, "failing took %.1f s", test_now() - t0);
  TEST_OK(symcomm_stream_destroy(s4));
  TEST_OK(symcomm_stream_destroy(s3));
  TEST_OK(symcomm_comm_destroy(fresh));
  TEST_OK(symcomm_stream_destroy(s2));
  tdev_free(a);
  tdev_free(b);
}

static void test_slow_order(void) {
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  enum { X = 0, SUM = 5, Y = 10, TOTAL = 11, ALL = 12 };
  int32_t h[ALL], *d = tdev_alloc(sizeof(h)), *sum = &h[SUM];
  for (int i = 0; i < 5; i++) {
    h[X + i] = rank + i;
    h[SUM + i] = -1;
  }
  h[Y] = rank;
  h[TOTAL] = -1;
  tdev_upload(d, h, sizeof(h));
  for (int i = 0; i < 5; i++) {
    /* Rank 1 comes late to each: every one finishes inside the timeout,
     * the five together do not. */
    if (rank == 1)
      usleep(1000 * 1000);
    TEST_OK(symcomm_allreduce(&d[X + i], &d[SUM + i], 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  }
  TEST_OK(symcomm_allreduce(&d[Y], &d[TOTAL], 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, s2));
  TEST_OK(symcomm_stream_synchronize(s2));
  SYNC();
  tdev_download(h, d, sizeof(h));
  int32_t total = h[TOTAL];
  TEST_ASSERT(total == nranks * (nranks - 1) / 2, "total %d", total);
  for (int i = 0; i < 5; i++)
    TEST_ASSERT(sum[i] == nranks * (nranks - 1) / 2 + nranks * i, "sum %d: %d", i, sum[i]);
  TEST_OK(symcomm_stream_destroy(s2));
  tdev_free(d);
}

/* A collective queued before symcomm_comm_abort and started after it (its
 * stream held by a window wait until then), with every peer's lines (LL) or
 * arrivals (the barrier paths) already there: it fails with ABORTED on the
 * aborting rank (the kernel reads the device copy of the stop word, which
 * the abort waits for), never reports success. TEST_LL_KIND picks the
 * collective (allreduce, broadcast, reduce), SYMCOMM_ALGO its path. */
static void test_abort_queued(void) {
  symcomm_comm_t sub;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &sub));
  symcomm_stream_t ss, held, s2;
  TEST_OK(symcomm_stream_create(sub, &ss));
  TEST_OK(symcomm_stream_create(comm, &held));
  TEST_OK(symcomm_stream_create(comm, &s2));
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 4096, &win));
  int32_t h[16];
  for (int i = 0; i < 16; i++)
    h[i] = rank + i;
  int32_t *a = tdev_alloc(sizeof(h)), *b = tdev_alloc(sizeof(h));
  tdev_upload(a, h, sizeof(h));
  TEST_OK(symcomm_allreduce(a, b, 2, SYMCOMM_INT32, SYMCOMM_SUM, sub, ss));
  TEST_OK(symcomm_stream_synchronize(ss));
  const char *kind = getenv("TEST_LL_KIND") != NULL ? getenv("TEST_LL_KIND") : "allreduce";
#define LL_CALL(S)                                                                                 \
  (strcmp(kind, "broadcast") == 0 ? symcomm_broadcast(a, b, 2, SYMCOMM_INT32, 1, sub, S)           \
   : strcmp(kind, "reduce") == 0  ? symcomm_reduce(a, b, 2, SYMCOMM_INT32, SYMCOMM_SUM, 1, sub, S) \
                                  : symcomm_allreduce(a, b, 2, SYMCOMM_INT32, SYMCOMM_SUM, sub, S))
  if (rank != 0) /* its lines go out now; it waits for rank 0's */
    TEST_OK(LL_CALL(ss));
  TEST_OK(symcomm_allreduce(a + 8, b + 8, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  SYNC();
  if (rank == 0) {
    usleep(20 * 1000); /* the others' pushes are out */
    TEST_OK(symcomm_wait_signal(win, 0, SYMCOMM_CMP_GE, 1, held));
    TEST_OK(LL_CALL(held));
    TEST_OK(symcomm_comm_abort(sub));
    TEST_OK(symcomm_signal(win, 0, 0, 1, SYMCOMM_SIGNAL_SET, s2));
    TEST_OK(symcomm_stream_synchronize(s2));
    symcomm_result_t r = symcomm_stream_synchronize(held);
    /* The stream is comm's: its sentence is comm's last error. */
    printf("rank 0: the %s queued before the abort: %s (%s)\n", kind,
           symcomm_result_string(r), r == SYMCOMM_OK ? "" : symcomm_last_error(comm));
    TEST_ASSERT(r == SYMCOMM_ERR_ABORTED,
                "the %s queued before this rank's abort and run after it: %s", kind,
                symcomm_result_string(r));
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "abort"),
                "the sentence of the %s stopped by the abort does not say so: '%s'", kind,
                symcomm_last_error(comm));
  } else {
    symcomm_result_t r = symcomm_stream_synchronize(ss);
    printf("rank %d: %s (%s)\n", rank, symcomm_result_string(r),
           r == SYMCOMM_OK ? "" : symcomm_last_error(sub));
    TEST_ASSERT(r == SYMCOMM_OK || test_contains(symcomm_last_error(sub), "rank 0"), "%s",
                symcomm_last_error(sub));
  }
  TEST_OK(symcomm_allreduce(a + 8, b + 8, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  SYNC();
  TEST_OK(symcomm_window_free(win));
  (void)symcomm_stream_destroy(ss);
  (void)symcomm_stream_destroy(held);
  TEST_OK(symcomm_stream_destroy(s2));
  TEST_OK(symcomm_comm_destroy(sub));
  tdev_free(a);
  tdev_free(b);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_coll matrix|large|blocks|huge|algos|many|order|concurrent|args|mismatch|windows|windows_kinds|"
                    "window_any_offset|window_same_offset|group|choices|stopped|after_p2p|slow_order|abort_queued\n");
    return 2;
  }
  const char *what = argv[1];
  const char *launch_rank = getenv("SYMCOMM_RANK");
  if (strcmp(what, "choices") == 0 && launch_rank != NULL && strcmp(launch_rank, "0") == 0) {
    /* What auto does not pick above the one-shot size: two-shot where 2
     * ranks on GPUs run one-shot at every size (the CUDA backend's
     * pair_oneshot), else one-shot. */
    const char *world = getenv("SYMCOMM_WORLD_SIZE"), *backend = getenv("SYMCOMM_BACKEND");
    bool gpu_pair = world != NULL && strcmp(world, "2") == 0 && backend != NULL &&
                    strcmp(backend, "cuda") == 0;
    setenv("SYMCOMM_ALGO", gpu_pair ? "allreduce=twoshot" : "allreduce=oneshot", 1);
  }
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  if (strcmp(what, "slow_order") == 0)
    config.timeout_ms = 3000;
  TEST_OK(symcomm_init_from_env(&comm, &config));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &nranks));
  tdev_open(comm);
  TEST_OK(symcomm_stream_create(comm, &stream));
  if (strcmp(what, "matrix") == 0)
    test_matrix();
  else if (strcmp(what, "algos") == 0)
    test_algos();
  else if (strcmp(what, "order") == 0)
    test_order();
  else if (strcmp(what, "large") == 0)
    test_large();
  else if (strcmp(what, "blocks") == 0)
    test_blocks();
  else if (strcmp(what, "huge") == 0)
    test_huge();
  else if (strcmp(what, "each") == 0)
    test_each();
  else if (strcmp(what, "many") == 0)
    test_many();
  else if (strcmp(what, "concurrent") == 0)
    test_concurrent();
  else if (strcmp(what, "args") == 0)
    test_args();
  else if (strcmp(what, "mismatch") == 0)
    test_mismatch();
  else if (strcmp(what, "mismatch_ll_bcast") == 0)
    test_mismatch_protocols("bcast");
  else if (strcmp(what, "mismatch_ll_limit") == 0)
    test_mismatch_protocols("limit");
  else if (strcmp(what, "mismatch_ll_reduce_root") == 0)
    test_mismatch_protocols("reduce_root");
  else if (strcmp(what, "mismatch_ll_reduce_limit") == 0)
    test_mismatch_protocols("reduce_limit");
  else if (strcmp(what, "windows") == 0)
    test_windows();
  else if (strcmp(what, "windows_kinds") == 0)
    test_windows_kinds();
  else if (strcmp(what, "window_any_offset") == 0)
    test_window_offsets(true);
  else if (strcmp(what, "window_same_offset") == 0)
    test_window_offsets(false);
  else if (strcmp(what, "group") == 0)
    test_group();
  else if (strcmp(what, "choices") == 0)
    test_choices();
  else if (strcmp(what, "after_p2p") == 0)
    test_after_p2p();
  else if (strcmp(what, "stopped") == 0)
    test_stopped();
  else if (strcmp(what, "slow_order") == 0)
    test_slow_order();
  else if (strcmp(what, "abort_queued") == 0)
    test_abort_queued();
  else
    TEST_ASSERT(0, "unknown case %s", what);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_coll %s: passed on %d ranks (%s backend)\n", what, nranks,
           tdev_cuda() ? "cuda" : "host");
  return 0;
}
