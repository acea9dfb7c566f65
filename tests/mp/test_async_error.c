/* symcomm_comm_get_async_error on every rank of a job (symcomm-run), on the
 * simulated backend or on GPUs (buffers from tests/common/test_device.h):
 *   test_async_error abort      4 ranks, and comms split from them by rank / 2
 *                               ({0,1} and {2,3}). Nothing failed: OK
 *                               everywhere. Rank 3 aborts its split while rank
 *                               2 waits in an all-reduce on it: rank 2 reads
 *                               REMOTE naming split rank 1 and the all-reduce
 *                               without synchronizing anything, rank 3 reads
 *                               ABORTED, and the world and the other split stay
 *                               OK. Then rank 1 aborts the world while ranks
 *                               0, 2 and 3 wait in a world all-reduce: the same
 *                               on each (rank 1 named), the stream's sentence
 *                               is then the query's, and it stays (sticky);
 *                               the {0,1} split still reads OK.
 *   test_async_error timeout    3 ranks, a short SYMCOMM_TIMEOUT: rank 0 (whose
 *                               process serves the root) stays away from an
 *                               all-reduce. Ranks 1 and 2 read a failure naming
 *                               rank 0; rank 0, never having queued anything,
 *                               reads REMOTE naming a rank that timed out.
 *   test_async_error disagree   ranks pass different counts: every rank reads
 *                               INVALID_USAGE ("disagree") though the
 *                               communicator itself was not stopped, and still
 *                               does after later sends and receives work. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_device.h"
#include "test_util.h"

#define COUNT 4096
#define WAIT_S 20.0 /* a bound for the failure to arrive; far above what it takes */

static int rank, size;

static symcomm_result_t async_error(symcomm_comm_t comm) {
  symcomm_result_t err = SYMCOMM_ERR_INTERNAL;
  TEST_OK(symcomm_comm_get_async_error(comm, &err));
  return err;
}

/* Polls the query (never the stream) until the communicator has failed. */
static symcomm_result_t await_async_error(symcomm_comm_t comm, const char *what) {
  double until = test_now() + WAIT_S;
  symcomm_result_t err;
  while ((err = async_error(comm)) == SYMCOMM_OK) {
    TEST_ASSERT(test_now() < until, "rank %d: %s: no asynchronous error after %.0f s", rank, what,
                WAIT_S);
    usleep(2000);
  }
  return err;
}

static void expect_ok(symcomm_comm_t comm, const char *what) {
  symcomm_result_t err = async_error(comm);
  TEST_ASSERT(err == SYMCOMM_OK, "rank %d: %s: %s (%s)", rank, what, symcomm_result_string(err),
              symcomm_last_error(comm));
}

/* An all-reduce with rank- and index-dependent data; its result is not looked at. */
static void queue_allreduce(symcomm_comm_t comm, symcomm_stream_t s, int32_t *buf, size_t count) {
  int32_t *h = malloc(count * sizeof(*h));
  TEST_ASSERT(h != NULL);
  for (size_t i = 0; i < count; i++)
    h[i] = (int32_t)((rank + 1) * 1009 + (int)i * 7);
  tdev_upload(buf, h, count * sizeof(*h));
  free(h);
  TEST_OK(symcomm_allreduce(buf, buf, count, SYMCOMM_INT32, SYMCOMM_SUM, comm, s));
}

/* The failure the query saw stays, and a synchronize of the stream that
 * carried the failed work reports the same result (with the same sentence on
 * the simulated backend, where a launch fails in one block). */
static void expect_sticky(symcomm_comm_t comm, symcomm_stream_t s, symcomm_result_t err) {
  char seen[1024];
  snprintf(seen, sizeof(seen), "%s", symcomm_last_error(comm));
  if (s != NULL) {
    symcomm_result_t r = symcomm_stream_synchronize(s);
    TEST_ASSERT(r == err, "rank %d: the stream says %s (%s), the query said %s (%s)", rank,
                symcomm_result_string(r), symcomm_last_error(comm), symcomm_result_string(err), seen);
    snprintf(seen, sizeof(seen), "%s", symcomm_last_error(comm));
  }
  for (int i = 0; i < 3; i++) {
    usleep(20000);
    symcomm_result_t again = async_error(comm);
    TEST_ASSERT(again == err, "rank %d: the query said %s, then %s", rank, symcomm_result_string(err),
                symcomm_result_string(again));
    if (s != NULL && !tdev_cuda())
      TEST_ASSERT(strcmp(symcomm_last_error(comm), seen) == 0,
                  "rank %d: the query says '%s', the stream said '%s'", rank,
                  symcomm_last_error(comm), seen);
  }
}

static void barrier(symcomm_comm_t comm, symcomm_stream_t s, int32_t *buf) {
  queue_allreduce(comm, s, buf, 1);
  TEST_OK(symcomm_stream_synchronize(s));
}

static void test_abort(symcomm_comm_t world) {
  TEST_ASSERT(size == 4, "run it on 4 ranks");
  symcomm_comm_t half;
  TEST_OK(symcomm_comm_split(world, rank / 2, rank, &half));
  symcomm_stream_t s, hs;
  TEST_OK(symcomm_stream_create(world, &s));
  TEST_OK(symcomm_stream_create(half, &hs));
  int32_t *buf = tdev_alloc(COUNT * sizeof(int32_t));
  symcomm_result_t bad = SYMCOMM_ERR_INTERNAL;
  TEST_EXPECT_RESULT(symcomm_comm_get_async_error(NULL, &bad), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(symcomm_comm_get_async_error(world, NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(bad == SYMCOMM_ERR_INTERNAL, "an output was written by a failed call");
  barrier(world, s, buf);
  barrier(half, hs, buf);
  expect_ok(world, "before anything failed");
  expect_ok(half, "before anything failed (split)");

  /* Split {2,3}: rank 3 (its rank 1) aborts while rank 2 waits for it. */
  if (rank == 2) {
    queue_allreduce(half, hs, buf, COUNT);
    symcomm_result_t err = await_async_error(half, "split all-reduce, split rank 1 aborts");
    const char *why = symcomm_last_error(half);
    TEST_ASSERT(err == SYMCOMM_ERR_REMOTE && test_contains(why, "rank 1 aborted the communicator"),
                "rank 2: %s: %s", symcomm_result_string(err), why);
    expect_sticky(half, hs, err);
    TEST_ASSERT(test_contains(symcomm_last_error(half), "during all-reduce #"), "rank 2: %s",
                symcomm_last_error(half));
    printf("rank 2 (split): %s: %s\n", symcomm_result_string(err), symcomm_last_error(half));
  } else if (rank == 3) {
    usleep(200000);
    TEST_OK(symcomm_comm_abort(half));
    TEST_ASSERT(async_error(half) == SYMCOMM_ERR_ABORTED, "rank 3: %s", symcomm_last_error(half));
    TEST_ASSERT(test_contains(symcomm_last_error(half), "aborted"), "%s", symcomm_last_error(half));
  }
  barrier(world, s, buf); /* the split's failure is over: it did not reach the world */
  expect_ok(world, "after a split of it failed");
  if (rank < 2)
    expect_ok(half, "after the other split failed");

  /* The world: rank 1 aborts while the others wait for it in an all-reduce. */
  if (rank == 1) {
    usleep(200000);
    TEST_OK(symcomm_comm_abort(world));
    symcomm_result_t err = async_error(world);
    TEST_ASSERT(err == SYMCOMM_ERR_ABORTED, "rank 1: %s", symcomm_result_string(err));
    expect_sticky(world, NULL, err);
  } else {
    queue_allreduce(world, s, buf, COUNT);
    symcomm_result_t err = await_async_error(world, "world all-reduce, rank 1 aborts");
    const char *why = symcomm_last_error(world);
    TEST_ASSERT(err == SYMCOMM_ERR_REMOTE && test_contains(why, "rank 1 aborted the communicator"),
                "rank %d: %s: %s", rank, symcomm_result_string(err), why);
    expect_sticky(world, s, err);
    printf("rank %d (world): %s: %s\n", rank, symcomm_result_string(err), symcomm_last_error(world));
  }
  /* Split {0,1} knows nothing of it: its ranks' processes are alive. */
  if (rank < 2) {
    expect_ok(half, "after the world failed");
    barrier(half, hs, buf);
  } else {
    TEST_ASSERT(async_error(half) != SYMCOMM_OK, "rank %d: the split forgot its failure", rank);
  }
  tdev_free(buf);
  TEST_OK(symcomm_stream_destroy(hs));
  TEST_OK(symcomm_stream_destroy(s));
  TEST_OK(symcomm_comm_destroy(half));
}

static void test_timeout(symcomm_comm_t comm) {
  TEST_ASSERT(size == 3, "run it on 3 ranks");
  /* Rank 0 stays away: its process serves the root, so it is there to hear
   * the others' failure whichever of them finishes first. */
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  int32_t *buf = tdev_alloc(COUNT * sizeof(int32_t));
  barrier(comm, s, buf);
  expect_ok(comm, "before anything failed");
  if (rank == 0) {
    symcomm_result_t err = await_async_error(comm, "the others time out waiting for rank 0");
    const char *why = symcomm_last_error(comm);
    TEST_ASSERT(err == SYMCOMM_ERR_REMOTE &&
                    (test_contains(why, "rank 1 failed") || test_contains(why, "rank 2 failed")),
                "rank 0: %s: %s", symcomm_result_string(err), why);
    expect_sticky(comm, NULL, err);
    printf("rank 0 (stayed away): %s: %s\n", symcomm_result_string(err), symcomm_last_error(comm));
  } else {
    queue_allreduce(comm, s, buf, COUNT);
    symcomm_result_t err = await_async_error(comm, "an all-reduce rank 0 never joins");
    const char *why = symcomm_last_error(comm);
    TEST_ASSERT((err == SYMCOMM_ERR_TIMEOUT || err == SYMCOMM_ERR_REMOTE) &&
                    test_contains(why, "rank 0"),
                "rank %d: %s: %s", rank, symcomm_result_string(err), why);
    expect_sticky(comm, s, err);
    printf("rank %d: %s: %s\n", rank, symcomm_result_string(err), symcomm_last_error(comm));
  }
  tdev_free(buf);
  TEST_OK(symcomm_stream_destroy(s));
}

static void test_disagree(symcomm_comm_t comm) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  int32_t *buf = tdev_alloc(COUNT * sizeof(int32_t));
  barrier(comm, s, buf);
  expect_ok(comm, "before anything failed");
  queue_allreduce(comm, s, buf, rank == size - 1 ? COUNT : COUNT / 2);
  symcomm_result_t err = await_async_error(comm, "an all-reduce whose counts differ");
  TEST_ASSERT(err == SYMCOMM_ERR_INVALID_USAGE && test_contains(symcomm_last_error(comm), "disagree"),
              "rank %d: %s: %s", rank, symcomm_result_string(err), symcomm_last_error(comm));
  expect_sticky(comm, s, err);
  /* Sends and receives still work; the query keeps the first failure. */
  symcomm_stream_t ps;
  TEST_OK(symcomm_stream_create(comm, &ps));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int32_t *in = tdev_alloc(COUNT * sizeof(int32_t));
  TEST_OK(symcomm_group_start());
  TEST_OK(symcomm_send(buf, COUNT, SYMCOMM_INT32, right, comm, ps));
  TEST_OK(symcomm_recv(in, COUNT, SYMCOMM_INT32, left, comm, ps));
  TEST_OK(symcomm_group_end());
  TEST_OK(symcomm_stream_synchronize(ps));
  TEST_ASSERT(async_error(comm) == err, "rank %d: the first failure was forgotten", rank);
  printf("rank %d: %s: %s\n", rank, symcomm_result_string(err), symcomm_last_error(comm));
  tdev_free(in);
  tdev_free(buf);
  TEST_OK(symcomm_stream_destroy(ps));
  TEST_OK(symcomm_stream_destroy(s));
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  symcomm_comm_t comm;
  tdev_init_job(&comm, &rank, &size, false);
  if (strcmp(what, "abort") == 0)
    test_abort(comm);
  else if (strcmp(what, "timeout") == 0)
    test_timeout(comm);
  else if (strcmp(what, "disagree") == 0)
    test_disagree(comm);
  else {
    fprintf(stderr, "usage: test_async_error abort|timeout|disagree (under symcomm-run)\n");
    return 2;
  }
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_async_error %s: all passed\n", what);
  return 0;
}
