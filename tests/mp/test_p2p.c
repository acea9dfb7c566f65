/* Send/recv under symcomm-run, every byte checked:
 *   test_p2p sizes      every rank sends to the next and receives from the
 *                       previous (a grouped ring), at 0, 1, 7, 4095 bytes, around
 *                       the chunk size and the ring's size, 1 MiB and 64 MiB + 3
 *                       bytes, from unaligned addresses too; then a burst of
 *                       multi-chunk messages queued back to back
 *   test_p2p ring       the grouped ring with many sizes (the 16-rank test)
 *   test_p2p order      10,000 small messages from rank 0 to rank 1 arrive in order
 *   test_p2p streams    two streams on one pair and direction: each message
 *                       arrives whole, once; within a host matched in call
 *                       order whichever stream each side used (an op on
 *                       another stream than its queue's last waits for that
 *                       stream), between hosts in the order they run
 *   test_p2p mismatch   a receive of another size fails on both sides, naming
 *                       both sizes (an eager send within a host, which ends at
 *                       its put, at its next send on the pair), and writes
 *                       nothing
 *   test_p2p args       bad arguments fail before anything is queued
 *   test_p2p alltoall   every rank sends to and receives from every other rank
 *                       in one group (2 (n-1) ops per launch)
 *   test_p2p biggroup   one group of 100 sends to the right and 100 receives
 *                       from the left, plus 50 each the other way, posted in a
 *                       different order on odd and even ranks: more than one
 *                       launch holds, several blocks each, no deadlock
 *   test_p2p settings   a rank whose SYMCOMM_P2P_LANES differs from the others':
 *                       every rank's init fails, naming the setting
 *   test_p2p eagerdiffers  the same with SYMCOMM_P2P_EAGER_BYTES (equal sizes
 *                       would otherwise meet in two protocols)
 *   test_p2p eagertoobig   SYMCOMM_P2P_EAGER_BYTES above SYMCOMM_P2P_LANE_BYTES:
 *                       init fails naming both
 *   test_p2p manylanes  SYMCOMM_P2P_LANES=40 (more than 32) with the slots left to
 *                       their default: init fails naming the lanes
 *   test_p2p window     receives into windows (data moves once, straight from
 *                       the sender), mixed with staged ones, and a mismatch there
 * Every message carries its own data (tests/common/test_data.h: a function of
 * the message's seed, the sender and the byte's position), so no two chunks or
 * messages look alike; receive buffers start as a sentinel, and the guard bytes
 * around them, and the send buffers, must come back unchanged. The same
 * program runs on both backends: buffers are the rank's device memory
 * (tests/common/test_device.h), filled and checked in a host copy. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;
static uint64_t messages; /* seeds: every rank posts the same sequence */

static uint64_t next_seed(void) { return ++messages * 1000003u; }

/* Whether a send of `bytes` to a rank of this host goes eagerly: it then
 * ends at its put, and a receive's refusal of its size reaches the sender
 * at its next send on the pair. Unset, the limit is 16 KiB or more. */
static bool eager_here(size_t bytes) {
  int hosts = 0;
  TEST_OK(symcomm_comm_host_count(comm, &hosts));
  const char *eager = getenv("SYMCOMM_P2P_EAGER_BYTES");
  return hosts == 1 && (eager == NULL || (atoll(eager) > 0 && (size_t)atoll(eager) >= bytes));
}

/* Rank 0 sent `bytes` (from buf) to rank 1, whose receive refuses its size:
 * the result of the send, or for an eager send, which ends at its put, of
 * the next send on the pair, which finds the refusal. */
static symcomm_result_t refused_send(void *buf, size_t bytes, symcomm_stream_t stream) {
  symcomm_result_t r = symcomm_stream_synchronize(stream);
  if (!eager_here(bytes))
    return r;
  TEST_ASSERT(r == SYMCOMM_OK, "an eager send of %zu bytes: %s (%s)", bytes,
              symcomm_result_string(r), symcomm_last_error(comm));
  TEST_OK(symcomm_send(buf, bytes, SYMCOMM_UINT8, 1, comm, stream));
  return symcomm_stream_synchronize(stream);
}

/* The chunk size in force: SYMCOMM_P2P_CHUNK_BYTES, else the backend's
 * default (its ops table: 512 KiB simulated, 256 KiB on GPUs). */
static size_t chunk_bytes(void) {
  for (int i = 0; i < symcomm_param_count(); i++) {
    const char *name, *def, *value;
    TEST_OK(symcomm_param_info(i, &name, NULL, &def, &value, NULL));
    if (strcmp(name, "SYMCOMM_P2P_CHUNK_BYTES") == 0 && value != NULL)
      return (size_t)strtoull(value, NULL, 10);
    if (strcmp(name, "SYMCOMM_P2P_CHUNK_BYTES") == 0)
      return tdev_cuda() ? 256u << 10 : 512u << 10;
  }
  TEST_ASSERT(0, "no parameter SYMCOMM_P2P_CHUNK_BYTES");
}

/* One grouped ring step: send `bytes` to the right, receive from the left. */
static void ring_step(symcomm_stream_t stream, size_t bytes, size_t misalign) {
  uint64_t seed = next_seed();
  tdev_buf_t out = tdev_buf_alloc(bytes, misalign), in = tdev_buf_alloc(bytes, misalign);
  td_fill(out.host.data, bytes, seed, rank);
  tdev_buf_push(&out);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(out.data, bytes, SYMCOMM_UINT8, right, comm, stream));
  TEST_OK(symcomm_recv(in.data, bytes, SYMCOMM_UINT8, left, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_buf_pull(&in);
  tdev_buf_pull(&out);
  char what[96];
  snprintf(what, sizeof(what), "ring of %zu bytes at +%zu", bytes, misalign);
  td_check(in.host.data, bytes, seed, left, what);
  td_check_guards(in.host.data, bytes, what);
  td_check(out.host.data, bytes, seed, rank, "the send buffer after the send");
  td_check_guards(out.host.data, bytes, what);
  tdev_buf_free(&out);
  tdev_buf_free(&in);
}

/* `n` grouped ring steps queued back to back, one synchronization at the end:
 * the pairs' rings carry one message after another without a pause, so chunk
 * numbers run on across messages and slots wrap mid-message. */
static void ring_burst(symcomm_stream_t stream, int n, size_t bytes) {
  enum { MAX = 8 };
  TEST_ASSERT(n <= MAX);
  tdev_buf_t out[MAX], in[MAX];
  uint64_t seed[MAX];
  size_t len[MAX];
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int k = 0; k < n; k++) {
    seed[k] = next_seed();
    len[k] = bytes + (size_t)k * 4099; /* never a whole number of chunks */
    out[k] = tdev_buf_alloc(len[k], (size_t)k);
    in[k] = tdev_buf_alloc(len[k], (size_t)k * 5);
    td_fill(out[k].host.data, len[k], seed[k], rank);
    tdev_buf_push(&out[k]);
  }
  for (int k = 0; k < n; k++) {
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(out[k].data, len[k], SYMCOMM_UINT8, right, comm, stream));
    TEST_OK(symcomm_recv(in[k].data, len[k], SYMCOMM_UINT8, left, comm, stream));
    TEST_OK(symcomm_group_end());
  }
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int k = 0; k < n; k++) {
    char what[96];
    snprintf(what, sizeof(what), "message %d of %d back to back (%zu bytes)", k, n, len[k]);
    tdev_buf_pull(&in[k]);
    tdev_buf_pull(&out[k]);
    td_check(in[k].host.data, len[k], seed[k], left, what);
    td_check_guards(in[k].host.data, len[k], what);
    td_check(out[k].host.data, len[k], seed[k], rank, "a send buffer after the burst");
    tdev_buf_free(&out[k]);
    tdev_buf_free(&in[k]);
  }
}

static void test_sizes(symcomm_stream_t stream) {
  size_t chunk = chunk_bytes();
  /* 16 and 64 KiB: the eager limit by default (simulated GPUs and GPUs);
   * 4 and 16 KiB: where GPU launches change their blocks' threads; 32 KiB:
   * the limit of make test-gpu's p2p_eager_32k step. */
  const size_t sizes[] = {0,     1,         7,     4095,      4097,          16383,    16384,
                          16385, 32767,     32768, 32769,     65535,         65536,    65537,
                          chunk - 1, chunk, chunk + 1, 4 * chunk + 1, 1u << 20, (64u << 20) + 3};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    for (size_t misalign = 0; misalign <= (sizes[i] < (1u << 20) ? 3 : 1); misalign += 3)
      ring_step(stream, sizes[i], misalign);
  ring_burst(stream, 6, 2 * chunk + 7);
  /* And as typed elements: 1000 int64 and 999 fp16. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const symcomm_dtype_t types[] = {SYMCOMM_INT64, SYMCOMM_FLOAT16};
  const size_t counts[] = {1000, 999};
  for (int k = 0; k < 2; k++) {
    uint64_t seed = next_seed();
    size_t bytes = counts[k] * td_dtype_size(types[k]);
    tdev_buf_t a = tdev_buf_alloc(bytes, 0), b = tdev_buf_alloc(bytes, 0);
    td_fill(a.host.data, bytes, seed, rank);
    tdev_buf_push(&a);
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(a.data, counts[k], types[k], right, comm, stream));
    TEST_OK(symcomm_recv(b.data, counts[k], types[k], left, comm, stream));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(stream));
    tdev_buf_pull(&b);
    td_check(b.host.data, bytes, seed, left, symcomm_dtype_string(types[k]));
    td_check_guards(b.host.data, bytes, symcomm_dtype_string(types[k]));
    tdev_buf_free(&a);
    tdev_buf_free(&b);
  }
}

static void test_ring(symcomm_stream_t stream) {
  for (size_t bytes = 1; bytes <= (4u << 20); bytes *= 4)
    ring_step(stream, bytes, 0);
  ring_step(stream, 0, 0);
}

static void test_order(symcomm_stream_t stream) {
  enum { N = 10000 };
  if (rank > 1)
    return;
  uint64_t seed = next_seed();
  tdev_buf_t values = tdev_buf_alloc(N * sizeof(uint64_t), 0);
  uint64_t *v = (uint64_t *)values.data;
  if (rank == 0) {
    td_fill(values.host.data, N * sizeof(uint64_t), seed, 0);
    tdev_buf_push(&values);
    for (int i = 0; i < N; i++)
      TEST_OK(symcomm_send(&v[i], 1, SYMCOMM_UINT64, 1, comm, stream));
  } else {
    for (int i = 0; i < N; i++)
      TEST_OK(symcomm_recv(&v[i], 1, SYMCOMM_UINT64, 0, comm, stream));
  }
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_buf_pull(&values);
  td_check(values.host.data, N * sizeof(uint64_t), seed, 0,
           rank == 1 ? "10,000 messages in order" : "sent");
  td_check_guards(values.host.data, N * sizeof(uint64_t), "10,000 messages");
  tdev_buf_free(&values);
}

/* Which of the two messages (seeds) `buf` holds whole: 0, 1, or -1. */
static int which_message(const unsigned char *buf, size_t bytes, const uint64_t *seeds) {
  td_buf_t expect = td_buf_alloc(bytes, 0);
  int found = -1;
  for (int k = 0; k < 2 && found < 0; k++) {
    td_fill(expect.data, bytes, seeds[k], 0);
    if (memcmp(expect.data, buf, bytes) == 0)
      found = k;
  }
  td_buf_free(&expect);
  return found;
}

static void test_streams(symcomm_stream_t s1) {
  if (rank > 1)
    return;
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  int hosts = 0;
  TEST_OK(symcomm_comm_host_count(comm, &hosts));
  enum { BYTES = 3u << 20, ROUNDS = 8 };
  for (int round = 0; round < ROUNDS; round++) {
    uint64_t seeds[2] = {next_seed(), next_seed()};
    tdev_buf_t m0 = tdev_buf_alloc(BYTES, 0), m1 = tdev_buf_alloc(BYTES, 1);
    if (rank == 0) {
      td_fill(m0.host.data, BYTES, seeds[0], 0);
      td_fill(m1.host.data, BYTES, seeds[1], 0);
      tdev_buf_push(&m0);
      tdev_buf_push(&m1);
      TEST_OK(symcomm_send(m0.data, BYTES, SYMCOMM_UINT8, 1, comm, s1));
      TEST_OK(symcomm_send(m1.data, BYTES, SYMCOMM_UINT8, 1, comm, s2));
    } else {
      /* Crossed streams, alternating which is posted first. */
      TEST_OK(symcomm_recv(m0.data, BYTES, SYMCOMM_UINT8, 0, comm, round % 2 ? s1 : s2));
      TEST_OK(symcomm_recv(m1.data, BYTES, SYMCOMM_UINT8, 0, comm, round % 2 ? s2 : s1));
    }
    TEST_OK(symcomm_stream_synchronize(s1));
    TEST_OK(symcomm_stream_synchronize(s2));
    tdev_buf_pull(&m0);
    tdev_buf_pull(&m1);
    int a = which_message(m0.host.data, BYTES, seeds), b = which_message(m1.host.data, BYTES, seeds);
    /* Within a host, call order; between hosts each arrives whole, once. */
    if (hosts == 1)
      TEST_ASSERT(a == 0 && b == 1, "round %d: the buffers hold messages %d and %d, not 0 and 1",
                  round, a, b);
    else
      TEST_ASSERT(a >= 0 && b >= 0 && a != b, "round %d: the buffers hold messages %d and %d",
                  round, a, b);
    td_check_guards(m0.host.data, BYTES, "first buffer");
    td_check_guards(m1.host.data, BYTES, "second buffer");
    tdev_buf_free(&m0);
    tdev_buf_free(&m1);
  }
  TEST_OK(symcomm_stream_destroy(s2));
}

static void test_mismatch(symcomm_stream_t stream) {
  if (rank > 1)
    return;
  tdev_buf_t buf = tdev_buf_alloc(300, 0);
  bool later = rank == 0 && eager_here(100); /* the sentence names the refused send */
  if (rank == 0) {
    td_fill(buf.host.data, 100, next_seed(), 0);
    tdev_buf_push(&buf);
    TEST_OK(symcomm_send(buf.data, 100, SYMCOMM_UINT8, 1, comm, stream));
  } else {
    TEST_OK(symcomm_recv(buf.data, 200, SYMCOMM_UINT8, 0, comm, stream));
  }
  symcomm_result_t res = rank == 0 ? refused_send(buf.data, 100, stream)
                                    : symcomm_stream_synchronize(stream);
  TEST_ASSERT(res != SYMCOMM_OK, "a receive of 200 bytes matched a send of 100");
  const char *why = symcomm_last_error(comm);
  TEST_ASSERT(test_contains(why, "100 bytes") && test_contains(why, "200 bytes"),
              "the sentence does not name both sizes: %s", why);
  /* Within a host the pair's sentence; between hosts the network's, this
   * rank's own or, when the root's news of the peer's came first, the peer's. */
  TEST_ASSERT(later ? test_contains(why, "to rank 1 had 100 bytes")
                    : test_contains(why, rank == 0 ? "this send to rank 1" : "this receive from rank 0") ||
                  test_contains(why, "this rank sends 100 bytes, but rank 1 receives") ||
                  test_contains(why, "this rank receives 200 bytes, but rank 0 sends"),
              "%s", why);
  tdev_buf_pull(&buf);
  if (rank == 1) /* a refused message writes nothing */
    td_check_untouched(buf.host.data, 300, "the receive buffer of a refused message");
  td_check_guards(buf.host.data, 300, "mismatch");
  /* The failed stream stays failed. */
  TEST_ASSERT(symcomm_stream_query(stream) == res);
  tdev_buf_free(&buf);
}

static void test_args(symcomm_stream_t stream) {
  unsigned char *b = tdev_alloc(8);
  TEST_EXPECT_RESULT(symcomm_send(b, 8, SYMCOMM_UINT8, rank, comm, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "this rank itself"));
  TEST_EXPECT_RESULT(symcomm_send(b, 8, SYMCOMM_UINT8, size, comm, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_recv(b, 8, SYMCOMM_UINT8, -1, comm, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_send(b, 8, (symcomm_dtype_t)42, 0, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "unknown data type 42"));
  TEST_EXPECT_RESULT(symcomm_send(b, SIZE_MAX / 2, SYMCOMM_INT64, (rank + 1) % size, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "overflow"));
  TEST_EXPECT_RESULT(symcomm_send(NULL, 8, SYMCOMM_UINT8, (rank + 1) % size, comm, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_send(b, 8, SYMCOMM_UINT8, (rank + 1) % size, comm, NULL),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_group_end(), SYMCOMM_ERR_INVALID_USAGE);
  /* Nothing was queued: the stream is idle and a real exchange still works. */
  TEST_OK(symcomm_stream_query(stream));
  ring_step(stream, 100, 0);
  tdev_free(b);
}

static void test_alltoall(symcomm_stream_t stream) {
  enum { BYTES = (1u << 20) + 5 };
  size_t n = (size_t)size;
  uint64_t seed = next_seed(); /* the block for rank `to` uses seed + to */
  tdev_buf_t out = tdev_buf_alloc(BYTES * n, 0), in = tdev_buf_alloc(BYTES * n, 0);
  for (int r = 0; r < size; r++)
    td_fill(out.host.data + (size_t)r * BYTES, BYTES, seed + (uint64_t)r, rank);
  tdev_buf_push(&out);
  TEST_OK(symcomm_group_start());
  for (int k = 1; k < size; k++) {
    int to = (rank + k) % size, from = (rank + size - k) % size;
    TEST_OK(symcomm_send(out.data + (size_t)to * BYTES, BYTES, SYMCOMM_UINT8, to, comm, stream));
    TEST_OK(symcomm_recv(in.data + (size_t)from * BYTES, BYTES, SYMCOMM_UINT8, from, comm, stream));
  }
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_buf_pull(&in);
  tdev_buf_pull(&out);
  for (int r = 0; r < size; r++) {
    char what[64];
    snprintf(what, sizeof(what), "all-to-all block from rank %d", r);
    if (r != rank)
      td_check(in.host.data + (size_t)r * BYTES, BYTES, seed + (uint64_t)rank, r, what);
    else /* nobody sends a rank its own block */
      td_check_untouched(in.host.data + (size_t)r * BYTES, BYTES, what);
  }
  td_check_guards(in.host.data, BYTES * n, "all-to-all receive buffer");
  td_check_guards(out.host.data, BYTES * n, "all-to-all send buffer");
  tdev_buf_free(&out);
  tdev_buf_free(&in);
}

static void test_big_group(symcomm_stream_t stream) {
  enum { RIGHT = 100, LEFT = 50, N = RIGHT + LEFT };
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  size_t chunk = chunk_bytes();
  uint64_t seed = next_seed(); /* message k uses seed + k */
  tdev_buf_t out[N], in[N];
  size_t len[N];
  for (int k = 0; k < N; k++) {
    len[k] = k % 10 == 0 ? 2 * chunk + (size_t)k : 8 + (size_t)k; /* some of several chunks */
    out[k] = tdev_buf_alloc(len[k], (size_t)k % 4);
    in[k] = tdev_buf_alloc(len[k], 0);
    td_fill(out[k].host.data, len[k], seed + (uint64_t)k, rank);
    tdev_buf_push(&out[k]);
  }
  /* Messages 0..RIGHT-1 go right, the others left (to the left neighbour,
   * which takes them as receives from its right). */
  TEST_OK(symcomm_group_start());
  for (int pass = 0; pass < 2; pass++) {
    bool sends = (pass == 0) == (rank % 2 == 0);
    for (int k = 0; k < N; k++) {
      int to = k < RIGHT ? right : left, from = k < RIGHT ? left : right;
      if (sends)
        TEST_OK(symcomm_send(out[k].data, len[k], SYMCOMM_UINT8, to, comm, stream));
      else
        TEST_OK(symcomm_recv(in[k].data, len[k], SYMCOMM_UINT8, from, comm, stream));
    }
  }
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int k = 0; k < N; k++) {
    char what[64];
    snprintf(what, sizeof(what), "message %d of a group of %d", k, 2 * N);
    tdev_buf_pull(&in[k]);
    td_check(in[k].host.data, len[k], seed + (uint64_t)k, k < RIGHT ? left : right, what);
    td_check_guards(in[k].host.data, len[k], what);
    tdev_buf_free(&out[k]);
    tdev_buf_free(&in[k]);
  }
}

/* Of several host copies, the one that holds device address p. */
static tdev_mirror_t *copy_holding(tdev_mirror_t *copies, int n, const void *p) {
  for (int k = 0; k < n; k++)
    if ((const unsigned char *)p >= copies[k].dev && (const unsigned char *)p < copies[k].dev + copies[k].bytes)
      return &copies[k];
  TEST_ASSERT(0, "%p is in none of the buffers", p);
}

static void test_window(symcomm_stream_t stream) {
  enum { BYTES = (5u << 20) + 11, GAP = 4096, TOTAL = 2 * BYTES + 3 * GAP };
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, TOTAL, &win));
  /* Two buffers in the window, each with room for guards around it. */
  unsigned char *base = symcomm_window_local(win);
  unsigned char *in_window = base + GAP + 3, *src_in_window = base + 2 * GAP + BYTES;
  tdev_buf_t plain = tdev_buf_alloc(BYTES, 0), out = tdev_buf_alloc(BYTES, 0);
  /* Host copies of the window and of both plain buffers (guards included). */
  tdev_mirror_t copies[3] = {tdev_mirror(base, TOTAL), tdev_buf_mirror(&plain), tdev_buf_mirror(&out)};
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int round = 0; round < 4; round++) {
    /* Alternate: into the window (direct), into plain memory (staged), and
     * sending from the window too. */
    unsigned char *dst = round % 2 == 0 ? in_window : plain.data;
    unsigned char *src = round == 2 ? src_in_window : out.data;
    tdev_mirror_t *dc = copy_holding(copies, 3, dst), *sc = copy_holding(copies, 3, src);
    unsigned char *hdst = tdev_host_of(dc, dst), *hsrc = tdev_host_of(sc, src);
    size_t bytes = round == 3 ? 0 : BYTES - (size_t)round;
    uint64_t seed = next_seed();
    td_fill(hsrc, bytes, seed, rank);
    td_reset(hdst, bytes);
    td_arm_guards(hdst, bytes);
    tdev_mirror_push(sc, src, bytes);
    tdev_mirror_push(dc, dst - TD_GUARD, bytes + 2 * TD_GUARD);
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(src, bytes, SYMCOMM_UINT8, right, comm, stream));
    TEST_OK(symcomm_recv(dst, bytes, SYMCOMM_UINT8, left, comm, stream));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(stream));
    tdev_mirror_pull(dc, dst - TD_GUARD, bytes + 2 * TD_GUARD);
    tdev_mirror_pull(sc, src, bytes);
    const char *what = round % 2 == 0 ? "into a window" : "staged";
    td_check(hdst, bytes, seed, left, what);
    td_check_guards(hdst, bytes, what);
    td_check(hsrc, bytes, seed, rank, "the send buffer afterwards");
  }
  /* Ungrouped into a window, one direction. */
  tdev_mirror_t *wc = &copies[0];
  unsigned char *hwin = tdev_host_of(wc, in_window);
  if (rank < 2 && size >= 2) {
    uint64_t seed = next_seed();
    if (rank == 0) {
      td_fill(out.host.data, 12345, seed, 0);
      tdev_buf_push(&out);
      TEST_OK(symcomm_send(out.data, 12345, SYMCOMM_UINT8, 1, comm, stream));
    } else {
      td_reset(hwin, 12345);
      td_arm_guards(hwin, 12345);
      tdev_mirror_push(wc, in_window - TD_GUARD, 12345 + 2 * TD_GUARD);
      TEST_OK(symcomm_recv(in_window, 12345, SYMCOMM_UINT8, 0, comm, stream));
    }
    TEST_OK(symcomm_stream_synchronize(stream));
    if (rank == 1) {
      tdev_mirror_pull(wc, in_window - TD_GUARD, 12345 + 2 * TD_GUARD);
      td_check(hwin, 12345, seed, 0, "ungrouped into a window");
      td_check_guards(hwin, 12345, "ungrouped into a window");
    }
    /* A size mismatch is caught the same way when the receive is in a
     * window, and writes nothing there. */
    if (rank == 0) {
      TEST_OK(symcomm_send(out.data, 64, SYMCOMM_UINT8, 1, comm, stream));
    } else {
      td_reset(hwin, 128);
      tdev_mirror_push(wc, in_window, 128);
      TEST_OK(symcomm_recv(in_window, 128, SYMCOMM_UINT8, 0, comm, stream));
    }
    TEST_ASSERT((rank == 0 ? refused_send(out.data, 64, stream)
                           : symcomm_stream_synchronize(stream)) != SYMCOMM_OK);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "64 bytes") &&
                    test_contains(symcomm_last_error(comm), "128 bytes"),
                "%s", symcomm_last_error(comm));
    if (rank == 1) {
      tdev_mirror_pull(wc, in_window, 128);
      td_check_untouched(hwin, 128, "a window receive of a refused message");
    }
  }
  tdev_mirror_free(&copies[0]);
  tdev_buf_free(&plain);
  tdev_buf_free(&out);
  TEST_OK(symcomm_window_free(win));
}

/* Before init: rank 1 sets `name` otherwise than the others (it would split
 * messages, or pick their protocol, otherwise than its peers expect); with
 * `theirs` NULL the others leave it to the backend's default, which the
 * sentence says. */
static int test_settings(const char *name, const char *mine, const char *theirs) {
  const char *me = getenv("SYMCOMM_RANK");
  TEST_ASSERT(me != NULL, "run under symcomm-run");
  if (atoi(me) == 1)
    setenv(name, mine, 1);
  else if (theirs != NULL)
    setenv(name, theirs, 1);
  else
    unsetenv(name);
  symcomm_result_t r = symcomm_init_from_env(&comm, NULL);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "init gave %s", symcomm_result_string(r));
  const char *why = symcomm_last_error(NULL);
  TEST_ASSERT(test_contains(why, name) && test_contains(why, "alike on every rank") &&
                  test_contains(why, mine) &&
                  test_contains(why, theirs != NULL ? theirs : "(the backend's default)"),
              "%s", why);
  printf("test_p2p settings: rank %s refused: %s\n", me, why);
  return 0;
}

/* SYMCOMM_P2P_LANES=40 alone on every rank: more lanes than a launch
 * takes, refused as such (the slots it would need are not the caller's
 * fault: they were left to their default). */
static int test_too_many_lanes(void) {
  const char *me = getenv("SYMCOMM_RANK");
  TEST_ASSERT(me != NULL, "run under symcomm-run");
  setenv("SYMCOMM_P2P_LANES", "40", 1);
  unsetenv("SYMCOMM_P2P_SLOTS");
  symcomm_result_t r = symcomm_init_from_env(&comm, NULL);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_ARGUMENT, "init gave %s", symcomm_result_string(r));
  const char *why = symcomm_last_error(NULL);
  TEST_ASSERT(test_contains(why, "SYMCOMM_P2P_LANES=40") && test_contains(why, "1..32"),
              "SYMCOMM_P2P_LANES=40 with the slots left to their default was refused without "
              "naming the lanes: %s",
              why);
  printf("test_p2p manylanes: rank %s refused: %s\n", me, why);
  return 0;
}

/* SYMCOMM_P2P_EAGER_BYTES=8192 with SYMCOMM_P2P_LANE_BYTES=4096 on every
 * rank: an eager message must be one part. */
static int test_eager_too_big(void) {
  setenv("SYMCOMM_P2P_EAGER_BYTES", "8192", 1);
  setenv("SYMCOMM_P2P_LANE_BYTES", "4096", 1);
  symcomm_result_t r = symcomm_init_from_env(&comm, NULL);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_ARGUMENT, "init gave %s", symcomm_result_string(r));
  const char *why = symcomm_last_error(NULL);
  TEST_ASSERT(test_contains(why, "SYMCOMM_P2P_EAGER_BYTES=8192") &&
                  test_contains(why, "SYMCOMM_P2P_LANE_BYTES=4096"),
              "%s", why);
  printf("test_p2p eagertoobig: refused: %s\n", why);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr,
            "usage: test_p2p sizes|ring|order|streams|mismatch|args|window|alltoall|biggroup|settings|"
            "llmaxdiffers|llmaxalone|eagerdiffers|eagertoobig|manylanes\n");
    return 2;
  }
  if (strcmp(argv[1], "settings") == 0)
    return test_settings("SYMCOMM_P2P_LANES", "2", "1");
  if (strcmp(argv[1], "eagerdiffers") == 0)
    return test_settings("SYMCOMM_P2P_EAGER_BYTES", "100", "4000");
  if (strcmp(argv[1], "llmaxdiffers") == 0) /* the collectives' scratch layout */
    return test_settings("SYMCOMM_LL_MAX_BYTES", "4096", "8192");
  if (strcmp(argv[1], "llmaxalone") == 0)
    return test_settings("SYMCOMM_LL_MAX_BYTES", "4096", NULL);
  if (strcmp(argv[1], "eagertoobig") == 0)
    return test_eager_too_big();
  if (strcmp(argv[1], "manylanes") == 0)
    return test_too_many_lanes();
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  tdev_open(comm);
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  const char *what = argv[1];
  if (strcmp(what, "sizes") == 0)
    test_sizes(stream);
  else if (strcmp(what, "ring") == 0)
    test_ring(stream);
  else if (strcmp(what, "order") == 0)
    test_order(stream);
  else if (strcmp(what, "streams") == 0)
    test_streams(stream);
  else if (strcmp(what, "mismatch") == 0)
    test_mismatch(stream);
  else if (strcmp(what, "args") == 0)
    test_args(stream);
  else if (strcmp(what, "window") == 0)
    test_window(stream);
  else if (strcmp(what, "alltoall") == 0)
    test_alltoall(stream);
  else if (strcmp(what, "biggroup") == 0)
    test_big_group(stream);
  else
    TEST_ASSERT(0, "unknown case %s", what);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p %s: passed on %d ranks (%s backend)\n", what, size,
           tdev_cuda() ? "cuda" : "host");
  return 0;
}
