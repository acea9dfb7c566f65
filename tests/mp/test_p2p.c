/* Send/recv under symcomm-run, every byte checked:
 *   test_p2p sizes      every rank sends to the next and receives from the
 *                       previous (a grouped ring), at 0, 1, 7, 4095, 1 MiB and
 *                       64 MiB + 3 bytes, from unaligned addresses too
 *   test_p2p ring       the grouped ring with many sizes (the 16-rank test)
 *   test_p2p order      10,000 small messages from rank 0 to rank 1 arrive in order
 *   test_p2p streams    two streams at once; messages match in posting order
 *                       even when the receiver crosses the streams
 *   test_p2p mismatch   a receive of another size fails on both sides, naming both sizes
 *   test_p2p args       bad arguments fail before anything is queued
 *   test_p2p alltoall   every rank sends to and receives from every other rank
 *                       in one group (2 (n-1) ops per launch)
 *   test_p2p window     receives into windows (data moves once, straight from
 *                       the sender), mixed with staged ones, and a mismatch there */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

static unsigned char pattern(size_t i, int from, int salt) {
  return (unsigned char)(i * 37u + (unsigned)from * 101u + (unsigned)salt * 13u + 5u);
}

static void fill(unsigned char *buf, size_t n, int from, int salt) {
  for (size_t i = 0; i < n; i++)
    buf[i] = pattern(i, from, salt);
}

static void check(const unsigned char *buf, size_t n, int from, int salt, const char *what) {
  for (size_t i = 0; i < n; i++)
    TEST_ASSERT(buf[i] == pattern(i, from, salt), "%s: byte %zu of %zu from rank %d is %u, expected %u",
                what, i, n, from, buf[i], pattern(i, from, salt));
}

/* One grouped ring step: send `bytes` to the right, receive from the left. */
static void ring_step(symcomm_stream_t stream, size_t bytes, int misalign, int salt) {
  unsigned char *out = malloc(bytes + 8), *in = malloc(bytes + 8);
  TEST_ASSERT(out != NULL && in != NULL);
  unsigned char *src = out + misalign, *dst = in + misalign;
  fill(src, bytes, rank, salt);
  memset(dst, 0xee, bytes);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(src, bytes, SYMCOMM_UINT8, right, comm, stream));
  TEST_OK(symcomm_recv(dst, bytes, SYMCOMM_UINT8, left, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  char what[64];
  snprintf(what, sizeof(what), "ring of %zu bytes", bytes);
  check(dst, bytes, left, salt, what);
  free(out);
  free(in);
}

static void test_sizes(symcomm_stream_t stream) {
  const size_t sizes[] = {0, 1, 7, 4095, 1u << 20, (64u << 20) + 3};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    for (int misalign = 0; misalign <= (sizes[i] < (1u << 20) ? 3 : 1); misalign += 3)
      ring_step(stream, sizes[i], misalign, (int)i);
  /* And as typed elements: 1000 int64 and 999 fp16. */
  int64_t a[1000], b[1000];
  for (int i = 0; i < 1000; i++)
    a[i] = (int64_t)rank * 1000000 + i;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(a, 1000, SYMCOMM_INT64, right, comm, stream));
  TEST_OK(symcomm_recv(b, 1000, SYMCOMM_INT64, left, comm, stream));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int i = 0; i < 1000; i++)
    TEST_ASSERT(b[i] == (int64_t)left * 1000000 + i);
}

static void test_ring(symcomm_stream_t stream) {
  for (size_t bytes = 1; bytes <= (4u << 20); bytes *= 4)
    ring_step(stream, bytes, 0, 3);
  ring_step(stream, 0, 0, 4);
}

static void test_order(symcomm_stream_t stream) {
  enum { N = 10000 };
  if (rank > 1)
    return;
  uint64_t *values = calloc(N, sizeof(uint64_t));
  if (rank == 0) {
    for (uint64_t i = 0; i < N; i++) {
      values[i] = i * 3 + 1;
      TEST_OK(symcomm_send(&values[i], 1, SYMCOMM_UINT64, 1, comm, stream));
    }
  } else {
    for (int i = 0; i < N; i++)
      TEST_OK(symcomm_recv(&values[i], 1, SYMCOMM_UINT64, 0, comm, stream));
  }
  TEST_OK(symcomm_stream_synchronize(stream));
  if (rank == 1)
    for (uint64_t i = 0; i < N; i++)
      TEST_ASSERT(values[i] == i * 3 + 1, "message %llu holds %llu", (unsigned long long)i,
                  (unsigned long long)values[i]);
  free(values);
}

static void test_streams(symcomm_stream_t s1) {
  if (rank > 1)
    return;
  symcomm_stream_t s2;
  TEST_OK(symcomm_stream_create(comm, &s2));
  enum { BYTES = 3u << 20 };
  unsigned char *m0 = malloc(BYTES), *m1 = malloc(BYTES);
  if (rank == 0) {
    fill(m0, BYTES, 0, 20);
    fill(m1, BYTES, 0, 21);
    TEST_OK(symcomm_send(m0, BYTES, SYMCOMM_UINT8, 1, comm, s1)); /* message 0 */
    TEST_OK(symcomm_send(m1, BYTES, SYMCOMM_UINT8, 1, comm, s2)); /* message 1 */
  } else {
    /* Posted in order, on crossed streams: message 0 is received on s2. */
    TEST_OK(symcomm_recv(m0, BYTES, SYMCOMM_UINT8, 0, comm, s2));
    TEST_OK(symcomm_recv(m1, BYTES, SYMCOMM_UINT8, 0, comm, s1));
  }
  TEST_OK(symcomm_stream_synchronize(s1));
  TEST_OK(symcomm_stream_synchronize(s2));
  if (rank == 1) {
    check(m0, BYTES, 0, 20, "first message on the second stream");
    check(m1, BYTES, 0, 21, "second message on the first stream");
  }
  TEST_OK(symcomm_stream_destroy(s2));
  free(m0);
  free(m1);
}

static void test_mismatch(symcomm_stream_t stream) {
  if (rank > 1)
    return;
  unsigned char buf[300];
  memset(buf, 1, sizeof(buf));
  if (rank == 0)
    TEST_OK(symcomm_send(buf, 100, SYMCOMM_UINT8, 1, comm, stream));
  else
    TEST_OK(symcomm_recv(buf, 200, SYMCOMM_UINT8, 0, comm, stream));
  symcomm_result_t res = symcomm_stream_synchronize(stream);
  TEST_ASSERT(res != SYMCOMM_OK, "a receive of 200 bytes matched a send of 100");
  const char *why = symcomm_last_error(comm);
  TEST_ASSERT(test_contains(why, "100 bytes") && test_contains(why, "200 bytes"),
              "the sentence does not name both sizes: %s", why);
  TEST_ASSERT(test_contains(why, rank == 0 ? "this send to rank 1" : "this receive from rank 0"),
              "%s", why);
  /* The failed stream stays failed. */
  TEST_ASSERT(symcomm_stream_query(stream) == res);
}

static void test_args(symcomm_stream_t stream) {
  unsigned char b[8];
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
  ring_step(stream, 100, 0, 9);
}

static void test_alltoall(symcomm_stream_t stream) {
  enum { BYTES = (1u << 20) + 5 };
  unsigned char *out = malloc((size_t)BYTES * (size_t)size), *in = malloc((size_t)BYTES * (size_t)size);
  TEST_ASSERT(out != NULL && in != NULL);
  for (int r = 0; r < size; r++) {
    fill(out + (size_t)r * BYTES, BYTES, rank, 50 + r);
    memset(in + (size_t)r * BYTES, 0, BYTES);
  }
  TEST_OK(symcomm_group_start());
  for (int k = 1; k < size; k++) {
    int to = (rank + k) % size, from = (rank + size - k) % size;
    TEST_OK(symcomm_send(out + (size_t)to * BYTES, BYTES, SYMCOMM_UINT8, to, comm, stream));
    TEST_OK(symcomm_recv(in + (size_t)from * BYTES, BYTES, SYMCOMM_UINT8, from, comm, stream));
  }
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int r = 0; r < size; r++)
    if (r != rank)
      check(in + (size_t)r * BYTES, BYTES, r, 50 + rank, "all-to-all");
  free(out);
  free(in);
}

static void test_window(symcomm_stream_t stream) {
  enum { BYTES = (5u << 20) + 11 };
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 2 * BYTES + 4096, &win));
  unsigned char *in_window = (unsigned char *)symcomm_window_local(win) + 4096 + 3;
  unsigned char *plain = malloc(BYTES), *out = malloc(BYTES);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int round = 0; round < 4; round++) {
    /* Alternate: into the window (direct), into plain memory (staged), and
     * sending from the window too. */
    unsigned char *dst = round % 2 == 0 ? in_window : plain;
    unsigned char *src = round == 2 ? in_window + BYTES : out;
    size_t bytes = round == 3 ? 0 : BYTES - (size_t)round;
    fill(src, bytes, rank, 30 + round);
    memset(dst, 0, bytes);
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(src, bytes, SYMCOMM_UINT8, right, comm, stream));
    TEST_OK(symcomm_recv(dst, bytes, SYMCOMM_UINT8, left, comm, stream));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(stream));
    check(dst, bytes, left, 30 + round, round % 2 == 0 ? "into a window" : "staged");
  }
  /* Ungrouped into a window, one direction. */
  if (rank < 2 && size >= 2) {
    if (rank == 0) {
      fill(out, 12345, 0, 40);
      TEST_OK(symcomm_send(out, 12345, SYMCOMM_UINT8, 1, comm, stream));
    } else {
      TEST_OK(symcomm_recv(in_window, 12345, SYMCOMM_UINT8, 0, comm, stream));
    }
    TEST_OK(symcomm_stream_synchronize(stream));
    if (rank == 1)
      check(in_window, 12345, 0, 40, "ungrouped into a window");
    /* A size mismatch is caught the same way when the receive is in a window. */
    if (rank == 0)
      TEST_OK(symcomm_send(out, 64, SYMCOMM_UINT8, 1, comm, stream));
    else
      TEST_OK(symcomm_recv(in_window, 128, SYMCOMM_UINT8, 0, comm, stream));
    TEST_ASSERT(symcomm_stream_synchronize(stream) != SYMCOMM_OK);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "64 bytes") &&
                    test_contains(symcomm_last_error(comm), "128 bytes"),
                "%s", symcomm_last_error(comm));
  }
  free(plain);
  free(out);
  TEST_OK(symcomm_window_free(win));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_p2p sizes|ring|order|streams|mismatch|args|window|alltoall\n");
    return 2;
  }
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
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
  else
    TEST_ASSERT(0, "unknown case %s", what);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p %s: passed on %d ranks\n", what, size);
  return 0;
}
