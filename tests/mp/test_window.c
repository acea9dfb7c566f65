/* Windows and one-sided operations under symcomm-run (any rank count, any
 * number of simulated hosts):
 *   - window_alloc: local and peer pointers (NULL across hosts), sizes rounded
 *   - put / signal / put_signal / wait_signal in a ring within each host
 *   - window_register of a symcomm_mem_alloc buffer at an offset; two
 *     registered windows' pads kept apart; ranks that disagree on the kind
 *     or on SYMCOMM_WINDOW_ANY_OFFSET; puts and signals on such a window
 *   - mistakes: sizes that differ, offsets past the end, a slot out of range,
 *     a freed window, registering foreign memory, freeing a registered buffer,
 *     a size too large to round up to whole pages, a put from pageable host
 *     memory (refused on a GPU, fine on the simulated backend)
 * Window memory and sources are the rank's device memory on any backend
 * (tests/common/test_device.h): the test writes and reads host copies.
 *   test_window life: buffers of symcomm_mem_alloc outlive the communicator
 *   they were made through (test_life) */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_data.h"
#include "test_device.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size, host, local_rank, local_size;

/* The rank `steps` positions after this one on the same host. */
static int local_neighbour(int steps) {
  int found = -1, seen = -1;
  for (int k = 1; k <= size && found < 0; k++) {
    int r = (rank + k) % size, h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    if (h == host && ++seen == steps - 1)
      found = r;
  }
  return found;
}

static void test_pointers(void) {
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 1000, &win));
  TEST_ASSERT(symcomm_window_size(win) >= 1000 && symcomm_window_size(win) % 4096 == 0,
              "size %zu", symcomm_window_size(win));
  TEST_ASSERT(symcomm_window_local(win) == symcomm_window_peer(win, rank));
  for (int r = 0; r < size; r++) {
    int h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    TEST_ASSERT((symcomm_window_peer(win, r) != NULL) == (h == host), "rank %d (host %d)", r, h);
  }
  TEST_ASSERT(symcomm_window_peer(win, size) == NULL && symcomm_window_peer(win, -1) == NULL);
  TEST_OK(symcomm_window_free(win));
  TEST_ASSERT(symcomm_window_local(win) == NULL, "a freed window still gives a pointer");
}

/* Each rank puts its id and a block of data into the next local rank's
 * buffer, then signals; each waits for the previous one's signal and checks. */
static void test_put_signal(symcomm_stream_t stream, symcomm_window_t win, size_t base) {
  if (local_size < 2)
    return;
  int next = local_neighbour(1), prev = -1;
  for (int k = 1; k < size; k++) {
    int r = (rank + size - k) % size, h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    if (h == host) {
      prev = r;
      break;
    }
  }
  enum { BYTES = 100000 };
  uint64_t seed = 77 + base; /* one per call of this function */
  tdev_buf_t src = tdev_buf_alloc(BYTES, 0);
  td_fill(src.host.data, BYTES, seed, rank);
  tdev_buf_push(&src);
  /* The buffer starts as the sentinel, so that bytes the puts should not
   * touch can be checked too: each rank resets its own, then tells the rank
   * that puts into it. */
  size_t wbytes = symcomm_window_size(win);
  tdev_mirror_t copy = tdev_mirror(symcomm_window_local(win), wbytes);
  unsigned char *mine = copy.host;
  td_reset(mine, wbytes);
  tdev_mirror_push(&copy, copy.dev, wbytes);
  TEST_OK(symcomm_signal(win, prev, 6, 1, SYMCOMM_SIGNAL_ADD, stream));
  TEST_OK(symcomm_wait_signal(win, 6, SYMCOMM_CMP_GE, 1, stream)); /* next has reset */
  /* The id comes from host memory (the stack) on the simulated backend, where
   * any memory of the process is the device's; from device memory on a GPU,
   * where pageable memory is refused (test_put_errors). */
  uint64_t id = td_mix(seed, rank, 0);
  void *id_src = &id;
  if (tdev_cuda()) {
    id_src = tdev_alloc(sizeof(id));
    tdev_upload(id_src, &id, sizeof(id));
  }
  TEST_OK(symcomm_put(win, next, base, id_src, sizeof(id), stream));
  TEST_OK(symcomm_put_signal(win, next, base + 64, src.data, BYTES, 3, 1, SYMCOMM_SIGNAL_ADD, stream));
  TEST_OK(symcomm_signal(win, next, 5, 42, SYMCOMM_SIGNAL_SET, stream));
  TEST_OK(symcomm_wait_signal(win, 3, SYMCOMM_CMP_GE, 1, stream));
  TEST_OK(symcomm_wait_signal(win, 5, SYMCOMM_CMP_EQ, 42, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_mirror_pull(&copy, copy.dev, wbytes);
  uint64_t got;
  memcpy(&got, mine + base, sizeof(got));
  TEST_ASSERT(got == td_mix(seed, prev, 0), "the id put by rank %d is 0x%llx", prev,
              (unsigned long long)got);
  td_check(mine + base + 64, BYTES, seed, prev, "put_signal");
  td_check_untouched(mine, base, "the window before the puts");
  td_check_untouched(mine + base + 8, 56, "the window between the puts");
  td_check_untouched(mine + base + 64 + BYTES, wbytes - base - 64 - BYTES, "the window after the puts");
  /* Counters only grow: a second round adds to slot 3. */
  TEST_OK(symcomm_signal(win, next, 3, 2, SYMCOMM_SIGNAL_ADD, stream));
  TEST_OK(symcomm_wait_signal(win, 3, SYMCOMM_CMP_EQ, 3, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_mirror_free(&copy);
  tdev_buf_free(&src);
  if (id_src != &id)
    tdev_free(id_src);
}

static void test_register(symcomm_stream_t stream) {
  void *buf = NULL;
  TEST_OK(symcomm_mem_alloc(comm, 3 << 20, &buf));
  symcomm_window_t win;
  TEST_OK(symcomm_window_register(comm, (char *)buf + 4096, 1 << 20, &win));
  TEST_ASSERT(symcomm_window_local(win) == (char *)buf + 4096);
  /* Registered windows share a pad region, a pad each: signals to another
   * one must not reach this one's slots (its last wait counts slot 3 exactly). */
  symcomm_window_t other;
  TEST_OK(symcomm_window_register(comm, (char *)buf + (2 << 20), 4096, &other));
  if (local_size > 1) {
    TEST_OK(symcomm_signal(other, local_neighbour(1), 3, 5, SYMCOMM_SIGNAL_ADD, stream));
    TEST_OK(symcomm_wait_signal(other, 3, SYMCOMM_CMP_EQ, 5, stream));
    TEST_OK(symcomm_stream_synchronize(stream));
  }
  test_put_signal(stream, win, 256);
  TEST_OK(symcomm_window_free(other));
  /* Ranks must agree on the kind of window, too. */
  symcomm_window_t mixed;
  symcomm_result_t r = rank == 0 ? symcomm_window_register(comm, (char *)buf + (2 << 20), 4096, &mixed)
                                 : symcomm_window_alloc(comm, 4096, &mixed);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "got %s", symcomm_result_string(r));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree on the window"), "%s",
              symcomm_last_error(comm));
  /* And on its flags: the last rank registers without SYMCOMM_WINDOW_ANY_OFFSET. */
  unsigned flags = rank == size - 1 ? 0 : SYMCOMM_WINDOW_ANY_OFFSET;
  r = symcomm_window_register_flags(comm, (char *)buf + (2 << 20), 4096, flags, &mixed);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "flags that differ: got %s", symcomm_result_string(r));
  char both[96];
  snprintf(both, sizeof(both), "rank 0 registers it with SYMCOMM_WINDOW_ANY_OFFSET, rank %d without",
           size - 1);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree on the window's flags") &&
                  test_contains(symcomm_last_error(comm), both),
              "%s", symcomm_last_error(comm));
  /* Alike everywhere, it is a window (puts and signals as on any), and the
   * ranks stayed in step. */
  TEST_OK(symcomm_window_register_flags(comm, (char *)buf + (2 << 20), 1 << 20,
                                        SYMCOMM_WINDOW_ANY_OFFSET, &mixed));
  test_put_signal(stream, mixed, 0);
  TEST_OK(symcomm_window_free(mixed));
  /* The registered buffer cannot go while its window lives. */
  TEST_EXPECT_RESULT(symcomm_mem_free(comm, buf), SYMCOMM_ERR_INVALID_USAGE);
  TEST_OK(symcomm_window_free(win));
  TEST_OK(symcomm_mem_free(comm, buf));
  TEST_EXPECT_RESULT(symcomm_mem_free(comm, buf), SYMCOMM_ERR_INVALID_ARGUMENT);
  /* Memory that symcomm did not allocate cannot become a window. */
  char plain[64];
  TEST_EXPECT_RESULT(symcomm_window_register(comm, plain, sizeof(plain), &win),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "symcomm_mem_alloc"));
}

static void test_mistakes(symcomm_stream_t stream) {
  symcomm_window_t win;
  /* Sizes that differ: every rank fails, naming them. */
  TEST_EXPECT_RESULT(symcomm_window_alloc(comm, rank == size - 1 ? 8192 * 3 : 8192, &win),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree on the window's size"), "%s",
              symcomm_last_error(comm));
  TEST_EXPECT_RESULT(symcomm_window_alloc(comm, 0, &win), SYMCOMM_ERR_INVALID_ARGUMENT);
  /* A size that cannot be rounded up to whole pages: every rank fails at
   * once, saying so (not "0 bytes", which the rounding would wrap to), and
   * a size that only one rank asks for is a disagreement; the ranks stay in
   * step for the next window. */
  double t0 = test_now();
  TEST_EXPECT_RESULT(symcomm_window_alloc(comm, SIZE_MAX, &win), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "is too large"), "%s", symcomm_last_error(comm));
  TEST_EXPECT_RESULT(symcomm_window_alloc(comm, rank == 0 ? SIZE_MAX - 1 : 4096, &win),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "disagree on the window's size"), "%s",
              symcomm_last_error(comm));
  TEST_ASSERT(test_now() - t0 < 10, "refusing huge windows took %.1f s", test_now() - t0);
  TEST_OK(symcomm_window_alloc(comm, 4096, &win));
  uint64_t v = 1;
  int peer = local_size > 1 ? local_neighbour(1) : rank;
  /* The window holds its size rounded up to the granularity (4 KiB here, 2 MiB on a GPU). */
  size_t end = symcomm_window_size(win);
  TEST_ASSERT(end >= 4096, "window of %zu bytes", end);
  TEST_EXPECT_RESULT(symcomm_put(win, peer, end - 6, &v, 8, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "pass the window's end"));
  TEST_EXPECT_RESULT(symcomm_put(win, peer, SIZE_MAX - 2, &v, 8, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_put(win, size, 0, &v, 8, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_signal(win, peer, SYMCOMM_SIGNAL_SLOTS, 1, SYMCOMM_SIGNAL_SET, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_wait_signal(win, -1, SYMCOMM_CMP_GE, 1, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_wait_signal(win, 0, (symcomm_cmp_t)7, 1, stream),
                     SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_OK(symcomm_put(win, peer, 0, &v, 0, stream)); /* zero bytes: nothing to do */
  /* Pageable host memory: on a GPU, copying it would hold the call on the
   * host and could not be captured, so it is refused saying what works. */
  if (tdev_cuda()) {
    TEST_EXPECT_RESULT(symcomm_put(win, peer, 0, &v, 8, stream), SYMCOMM_ERR_INVALID_ARGUMENT);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "symcomm_put: src") &&
                    test_contains(symcomm_last_error(comm), "page-locked host memory"),
                "%s", symcomm_last_error(comm));
  } else {
    TEST_OK(symcomm_put(win, peer, 0, &v, 8, stream)); /* any memory is the simulated device's */
  }
  for (int r = 0; r < size; r++) {
    int h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    if (h != host)
      TEST_EXPECT_RESULT(symcomm_put(win, r, 0, &v, 8, stream), SYMCOMM_ERR_UNSUPPORTED);
  }
  TEST_OK(symcomm_stream_synchronize(stream));
  TEST_OK(symcomm_window_free(win));
  TEST_EXPECT_RESULT(symcomm_put(win, peer, 0, &v, 8, stream), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "freed"), "%s", symcomm_last_error(NULL));
  TEST_EXPECT_RESULT(symcomm_window_free(win), SYMCOMM_ERR_INVALID_USAGE);
}

/* A symcomm_mem_alloc buffer is the process's and the device's, not the
 * communicator's (issue 11): one made through comm becomes a window of a
 * split of it (ranks in reverse order), outlives comm, is an ordinary buffer
 * of the split afterwards and is freed through it; one made through the
 * split outlives it and is freed with no communicator, and so is one whose
 * window the split's destroy freed. */
static void test_life(void) {
  enum { COUNT = 50001, PART = 40003 };
  size_t sum_bytes = COUNT * sizeof(int64_t), cap = sum_bytes + 2 * TD_GUARD;
  TEST_ASSERT((size_t)size * PART <= sum_bytes);
  void *buf = NULL;
  TEST_OK(symcomm_mem_alloc(comm, cap, &buf));
  symcomm_comm_t split = NULL;
  int brank = -1, bsize = 0;
  TEST_OK(symcomm_comm_split(comm, 0, size - 1 - rank, &split));
  TEST_OK(symcomm_comm_rank(split, &brank));
  TEST_OK(symcomm_comm_size(split, &bsize));
  TEST_ASSERT(brank == size - 1 - rank && bsize == size, "rank %d of %d in the split", brank, bsize);
  symcomm_window_t win;
  TEST_OK(symcomm_window_register(split, buf, cap, &win));
  /* In use by a window: refused through either communicator, or none. */
  TEST_EXPECT_RESULT(symcomm_mem_free(comm, buf), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "still registered as 1 window"), "%s",
              symcomm_last_error(comm));
  TEST_EXPECT_RESULT(symcomm_mem_free(NULL, buf), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "free it first"), "%s", symcomm_last_error(NULL));

  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(split, &stream));
  tdev_mirror_t copy = tdev_mirror(buf, cap);
  char *data = (char *)buf + TD_GUARD;
  unsigned char *hdata = tdev_host_of(&copy, data);
  uint64_t seed = 1100 + (uint64_t)size;
  td_fill_small(hdata, COUNT, SYMCOMM_INT64, SYMCOMM_SUM, seed, brank, 0);
  td_arm_guards(hdata, sum_bytes);
  tdev_mirror_push(&copy, buf, cap);
  TEST_OK(symcomm_allreduce(data, data, COUNT, SYMCOMM_INT64, SYMCOMM_SUM, split, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_mirror_pull(&copy, buf, cap);
  td_check_reduced(hdata, COUNT, SYMCOMM_INT64, SYMCOMM_SUM, seed, 0, bsize,
                   "all-reduce in place in a window of the split");
  td_check_guards(hdata, sum_bytes, "all-reduce in a window of the split");

  /* The communicator it was made through goes, then the window: the buffer stays. */
  TEST_OK(symcomm_comm_destroy(comm));
  comm = NULL;
  TEST_OK(symcomm_window_free(win));
  size_t gathered = (size_t)bsize * PART;
  tdev_buf_t src = tdev_buf_alloc(PART, 0);
  td_fill(src.host.data, PART, seed + 1, brank);
  tdev_buf_push(&src);
  td_reset(hdata, gathered);
  td_arm_guards(hdata, gathered);
  tdev_mirror_push(&copy, buf, cap);
  TEST_OK(symcomm_allgather(src.data, data, PART, SYMCOMM_UINT8, split, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  tdev_mirror_pull(&copy, buf, cap);
  for (int r = 0; r < bsize; r++)
    td_check(hdata + (size_t)r * PART, PART, seed + 1, r,
             "all-gather into a buffer of the destroyed communicator");
  td_check_guards(hdata, gathered, "all-gather into a buffer of the destroyed communicator");
  tdev_buf_free(&src);
  tdev_mirror_free(&copy);
  TEST_OK(symcomm_mem_free(split, buf));

  /* Freed twice; not the start of a buffer; not a buffer at all. */
  TEST_EXPECT_RESULT(symcomm_mem_free(split, buf), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(split), "freed already"), "%s",
              symcomm_last_error(split));
  TEST_EXPECT_RESULT(symcomm_mem_free(NULL, buf), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "is not a buffer from symcomm_mem_alloc"),
              "%s", symcomm_last_error(NULL));
  /* Every rank refuses at once, before the collective part: nobody waits. */
  TEST_EXPECT_RESULT(symcomm_window_register(split, buf, 4096, &win), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(split), "is not inside one buffer"), "%s",
              symcomm_last_error(split));
  void *mine = NULL, *kept = NULL;
  TEST_OK(symcomm_mem_alloc(split, cap, &mine));
  TEST_EXPECT_RESULT(symcomm_mem_free(split, (char *)mine + 64), SYMCOMM_ERR_INVALID_ARGUMENT);
  char plain[64];
  TEST_EXPECT_RESULT(symcomm_mem_free(split, plain), SYMCOMM_ERR_INVALID_ARGUMENT);

  /* Destroy frees the split's window of `kept`, which may then go too. */
  TEST_OK(symcomm_mem_alloc(split, 4096, &kept));
  TEST_OK(symcomm_window_register(split, kept, 4096, &win));
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(split));
  unsigned char *put = malloc(cap), *got = malloc(cap);
  TEST_ASSERT(put != NULL && got != NULL);
  td_fill(put, cap, seed + 2, rank);
  td_reset(got, cap);
  tdev_upload(mine, put, cap);
  tdev_download(got, mine, cap);
  td_check(got, cap, seed + 2, rank, "a buffer of symcomm_mem_alloc after its communicator's destroy");
  free(put);
  free(got);
  TEST_OK(symcomm_mem_free(NULL, kept));
  TEST_OK(symcomm_mem_free(NULL, mine));
  TEST_EXPECT_RESULT(symcomm_mem_free(NULL, mine), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "freed already"), "%s", symcomm_last_error(NULL));
}

int main(int argc, char **argv) {
  bool life = argc > 1 && strcmp(argv[1], "life") == 0;
  TEST_ASSERT(argc == 1 || life, "usage: test_window [life]");
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  TEST_OK(symcomm_comm_host_index(comm, &host));
  TEST_OK(symcomm_comm_local_rank(comm, &local_rank));
  TEST_OK(symcomm_comm_local_size(comm, &local_size));
  tdev_open(comm);
  if (life) {
    test_life();
    if (rank == 0)
      printf("test_window life: passed on %d ranks (%s backend)\n", size, tdev_cuda() ? "cuda" : "host");
    return 0;
  }
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  test_pointers();
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 1 << 20, &win));
  test_put_signal(stream, win, 0);
  TEST_OK(symcomm_window_free(win));
  test_register(stream);
  test_mistakes(stream);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_window: passed on %d ranks (%s backend)\n", size, tdev_cuda() ? "cuda" : "host");
  return 0;
}
