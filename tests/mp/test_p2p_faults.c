/* Send/recv when things go wrong, under symcomm-run:
 *   destroy      destroying a communicator with work still queued (a send
 *                nobody receives, then abort; or a put still running) is safe,
 *                and its streams outlive it
 *   windowfree   freeing a window waits for the puts queued into it
 *   refused      a send on a stream that already failed is refused at once and
 *                does not take a place in the pair's order
 *   abandoned    a send queued behind a failure never runs: the peer's receive
 *                fails at once (not at its timeout), and so does the pair's next
 *                exchange, with a sentence that says why
 *   group3       a size mismatch with one rank inside a group of (eager) sends
 *                to two ranks: the sends end at their put, the mismatched
 *                receive fails naming the sizes, and so does rank 0's next send
 *                to that rank; the other rank gets its data or a sentence that
 *                does not blame sizes
 *   twocomms     a group using two communicators on one stream is refused
 *                whole, and the pairs stay usable */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

static void test_destroy(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  /* Both ranks are this far before rank 0 aborts: rank 1's monitor watches
   * from init on, so an abort during its init or stream_create ends those. */
  int32_t mine = 100 + rank, sum = 0;
  TEST_OK(symcomm_allreduce(&mine, &sum, 1, SYMCOMM_INT32, SYMCOMM_SUM, comm, s));
  TEST_OK(symcomm_stream_synchronize(s));
  TEST_ASSERT(sum == 201, "all-reduce gave %d", sum);
  char buf[1 << 16];
  memset(buf, 7, sizeof(buf));
  if (rank == 0) { /* a send nobody will receive */
    TEST_OK(symcomm_send(buf, sizeof(buf), SYMCOMM_UINT8, 1, comm, s));
  } else {
    /* Rank 1 stays until rank 0 has queued its send and aborted: an abort
     * here first would make rank 0's send a refusal. The split waits for
     * rank 0, which never comes to it. */
    symcomm_comm_t never = NULL;
    TEST_ASSERT(symcomm_comm_split(comm, 0, 0, &never) != SYMCOMM_OK && never == NULL,
                "a split without rank 0 went through");
  }
  TEST_OK(symcomm_comm_abort(comm));
  double t0 = test_now();
  TEST_OK(symcomm_comm_destroy(comm)); /* waits for the aborted send, then frees */
  TEST_ASSERT(test_now() - t0 < 5.0, "destroy waited %.1f s", test_now() - t0);
  /* The stream outlives its communicator and reports the abort. */
  symcomm_result_t r = symcomm_stream_synchronize(s);
  TEST_ASSERT(rank != 0 || r == SYMCOMM_ERR_ABORTED, "got %s", symcomm_result_string(r));
  TEST_OK(symcomm_stream_destroy(s));
  comm = NULL;
}

static void test_window_free(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  size_t bytes = 64u << 20;
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, bytes, &win));
  char *src = malloc(bytes);
  memset(src, 3, bytes);
  TEST_OK(symcomm_put(win, (rank + 1) % size, 0, src, bytes, s));
  TEST_OK(symcomm_put(win, (rank + 1) % size, 0, src, bytes, s));
  TEST_OK(symcomm_window_free(win)); /* no stream sync before: free must wait */
  TEST_OK(symcomm_stream_synchronize(s));
  TEST_OK(symcomm_stream_destroy(s));
  free(src);
}

/* Fails stream s with a wait that times out (rank 0's timeout is 1 s). */
static void fail_stream(symcomm_stream_t s, symcomm_window_t win) {
  TEST_OK(symcomm_wait_signal(win, 0, SYMCOMM_CMP_GE, 1, s));
  TEST_EXPECT_RESULT(symcomm_stream_synchronize(s), SYMCOMM_ERR_TIMEOUT);
}

/* A timeout fails its communicator on every rank, so the waits that fail
 * streams here time out on a communicator of their own (`side`, with a
 * window), and `comm` goes on. */
static symcomm_comm_t side_open(symcomm_window_t *win) {
  symcomm_comm_t side;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &side));
  TEST_OK(symcomm_window_alloc(side, 4096, win));
  return side;
}

static void side_close(symcomm_comm_t side, symcomm_window_t win) {
  /* side failed, or fails while this runs: the free's barrier may be refused,
   * but it unmaps either way; destroy frees the rest. */
  symcomm_window_free(win);
  TEST_OK(symcomm_comm_destroy(side));
}

static void test_refused(void) {
  symcomm_window_t win;
  symcomm_comm_t side = side_open(&win);
  symcomm_stream_t bad, good;
  TEST_OK(symcomm_stream_create(comm, &bad));
  TEST_OK(symcomm_stream_create(comm, &good));
  int x = 5, y = 0;
  if (rank == 0) {
    fail_stream(bad, win);
    TEST_EXPECT_RESULT(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, bad), SYMCOMM_ERR_TIMEOUT);
    /* The refused send took no number: this one is message 0 and matches. */
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, good));
  } else if (rank == 1) {
    TEST_OK(symcomm_recv(&y, 1, SYMCOMM_INT32, 0, comm, good));
  }
  TEST_OK(symcomm_stream_synchronize(good));
  TEST_ASSERT(rank != 1 || y == 5, "received %d", y);
  TEST_OK(symcomm_stream_destroy(bad));
  TEST_OK(symcomm_stream_destroy(good));
  side_close(side, win);
}

static void test_abandoned(void) {
  symcomm_window_t win;
  symcomm_comm_t side = side_open(&win);
  symcomm_stream_t s1, s2;
  TEST_OK(symcomm_stream_create(comm, &s1));
  TEST_OK(symcomm_stream_create(comm, &s2));
  int x = 5, y = 0;
  if (rank == 0) {
    /* The wait fails after 1 s; the send queued behind it never runs. */
    TEST_OK(symcomm_wait_signal(win, 0, SYMCOMM_CMP_GE, 1, s1));
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, s1));
    TEST_EXPECT_RESULT(symcomm_stream_synchronize(s1), SYMCOMM_ERR_TIMEOUT);
    /* The pair is marked failed: the next send fails at once. */
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, s2));
    double t0 = test_now();
    TEST_EXPECT_RESULT(symcomm_stream_synchronize(s2), SYMCOMM_ERR_REMOTE);
    TEST_ASSERT(test_now() - t0 < 1.5, "took %.1f s", test_now() - t0);
  } else if (rank == 1) {
    TEST_OK(symcomm_recv(&y, 1, SYMCOMM_INT32, 0, comm, s1));
    double t0 = test_now();
    TEST_EXPECT_RESULT(symcomm_stream_synchronize(s1), SYMCOMM_ERR_REMOTE);
    /* It fails when rank 0's send is abandoned (~1 s), not at its own timeout (6 s). */
    TEST_ASSERT(test_now() - t0 < 4.0, "the receive failed after %.1f s", test_now() - t0);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "failed earlier"), "%s",
                symcomm_last_error(comm));
    TEST_ASSERT(!test_contains(symcomm_last_error(comm), "bytes"), "blames sizes: %s",
                symcomm_last_error(comm));
  }
  TEST_OK(symcomm_stream_destroy(s1));
  TEST_OK(symcomm_stream_destroy(s2));
  side_close(side, win);
}

static void test_group3(void) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  char out[200], in[200];
  memset(out, 9, sizeof(out));
  memset(in, 0, sizeof(in));
  if (rank == 0) {
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(out, 100, SYMCOMM_UINT8, 1, comm, s));
    TEST_OK(symcomm_send(out, 100, SYMCOMM_UINT8, 2, comm, s));
    TEST_OK(symcomm_group_end());
    /* Sent eagerly, both end at their put; rank 1's refusal reaches the
     * next send to it, which names the sizes. */
    TEST_OK(symcomm_stream_synchronize(s));
    TEST_OK(symcomm_send(out, 100, SYMCOMM_UINT8, 1, comm, s));
    TEST_ASSERT(symcomm_stream_synchronize(s) != SYMCOMM_OK);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "200 bytes"), "%s", symcomm_last_error(comm));
  } else if (rank == 1) {
    TEST_OK(symcomm_recv(in, 200, SYMCOMM_UINT8, 0, comm, s));
    TEST_ASSERT(symcomm_stream_synchronize(s) != SYMCOMM_OK);
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "200 bytes"));
  } else if (rank == 2) {
    TEST_OK(symcomm_recv(in, 100, SYMCOMM_UINT8, 0, comm, s));
    symcomm_result_t r = symcomm_stream_synchronize(s);
    if (r == SYMCOMM_OK)
      TEST_ASSERT(in[0] == 9 && in[99] == 9);
    else
      TEST_ASSERT(!test_contains(symcomm_last_error(comm), "bytes"), "blames sizes: %s",
                  symcomm_last_error(comm));
  }
  TEST_OK(symcomm_stream_destroy(s));
}

static void test_two_comms(void) {
  symcomm_comm_t other;
  TEST_OK(symcomm_comm_split(comm, 0, rank, &other));
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  int x = rank, y = -1, z = -1;
  int peer = rank ^ 1;
  if (peer < size) {
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, peer, comm, s));
    TEST_OK(symcomm_recv(&y, 1, SYMCOMM_INT32, peer, other, s));
    TEST_EXPECT_RESULT(symcomm_group_end(), SYMCOMM_ERR_INVALID_USAGE);
    TEST_ASSERT(test_contains(symcomm_last_error(NULL), "two communicators on one stream"));
    /* Nothing was queued, and both pairs are still in step. */
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, peer, comm, s));
    TEST_OK(symcomm_recv(&y, 1, SYMCOMM_INT32, peer, comm, s));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(s));
    symcomm_stream_t s2;
    TEST_OK(symcomm_stream_create(other, &s2));
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, peer, other, s2));
    TEST_OK(symcomm_recv(&z, 1, SYMCOMM_INT32, peer, other, s2));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(s2));
    TEST_OK(symcomm_stream_destroy(s2));
    TEST_ASSERT(y == peer && z == peer, "got %d and %d", y, z);
  }
  TEST_OK(symcomm_stream_destroy(s));
  TEST_OK(symcomm_comm_destroy(other));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_p2p_faults destroy|windowfree|refused|abandoned|group3|twocomms\n");
    return 2;
  }
  /* Rank 0 gives up after 1 s, the others after 6 s: what rank 0's failures
   * do to its peers shows before their own timeouts could. */
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  const char *r = getenv("SYMCOMM_RANK");
  config.timeout_ms = r != NULL && atoi(r) == 0 ? 1000 : 6000;
  TEST_OK(symcomm_init_from_env(&comm, &config));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  const char *what = argv[1];
  if (strcmp(what, "destroy") == 0)
    test_destroy();
  else if (strcmp(what, "windowfree") == 0)
    test_window_free();
  else if (strcmp(what, "refused") == 0)
    test_refused();
  else if (strcmp(what, "abandoned") == 0)
    test_abandoned();
  else if (strcmp(what, "group3") == 0)
    test_group3();
  else if (strcmp(what, "twocomms") == 0)
    test_two_comms();
  else
    TEST_ASSERT(0, "unknown case %s", what);
  if (comm != NULL)
    TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_p2p_faults %s: passed on %d ranks\n", what, size);
  return 0;
}
