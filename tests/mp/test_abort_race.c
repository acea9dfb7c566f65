/* symcomm_comm_abort from a watchdog thread, racing the calls of the thread
 * that owns the communicator:  test_abort_race ROUNDS
 *
 * Each round makes a 2-rank job inside this process (rank 1 on a thread of
 * its own) and then, on rank 0, alternates two cases:
 *   split    the documented watchdog pattern: the main thread is in
 *            symcomm_comm_split (which waits for rank 1, who never splits),
 *            the watchdog aborts after a random delay, split returns ABORTED,
 *            and the main thread destroys the communicator at once
 *   drain    abort racing destroy itself: a send nobody receives is queued,
 *            the main thread destroys (which waits for the send) while the
 *            watchdog aborts, which ends that wait; both return OK
 *   destroy  abort racing a destroy that has nothing to wait for: abort
 *            returns OK, or INVALID_USAGE when destroy had already finished
 *            (the handle is dead then, and abort must not touch it)
 * Run under ASan and TSan (make test does both): any use of the
 * communicator's memory after destroy, or an unordered access to it, is a
 * report there. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

typedef struct watchdog {
  symcomm_comm_t comm;
  unsigned delay_us;
  int go; /* set (atomically) just before the call it races */
  symcomm_result_t result;
} watchdog_t;

static void *watchdog_main(void *arg) {
  watchdog_t *w = arg;
  while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
    sched_yield();
  if (w->delay_us > 0)
    usleep(w->delay_us);
  w->result = symcomm_comm_abort(w->comm);
  return NULL;
}

/* Rank 1: joins, then waits for rank 0 to finish with the round. */
typedef struct rank1 {
  symcomm_unique_id_t id;
  symcomm_comm_t comm;
  symcomm_result_t init;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int round_over;
} rank1_t;

static void *rank1_main(void *arg) {
  rank1_t *r = arg;
  r->init = symcomm_comm_init(&r->comm, 2, &r->id, 1, NULL);
  pthread_mutex_lock(&r->lock);
  while (!r->round_over)
    pthread_cond_wait(&r->cond, &r->lock);
  pthread_mutex_unlock(&r->lock);
  if (r->init == SYMCOMM_OK)
    TEST_OK(symcomm_comm_destroy(r->comm));
  return NULL;
}

static void round_split(symcomm_comm_t comm, watchdog_t *w) {
  symcomm_comm_t child = NULL;
  pthread_t t;
  pthread_create(&t, NULL, watchdog_main, w);
  __atomic_store_n(&w->go, 1, __ATOMIC_RELEASE);
  symcomm_result_t r = symcomm_comm_split(comm, 0, 0, &child);
  /* Rank 1 never splits: only the abort can end this split. */
  TEST_ASSERT(r == SYMCOMM_ERR_ABORTED, "split returned %s: %s", symcomm_result_string(r),
              symcomm_last_error(NULL));
  TEST_OK(symcomm_comm_destroy(comm)); /* while the watchdog may still be inside abort */
  pthread_join(t, NULL);
  TEST_ASSERT(w->result == SYMCOMM_OK, "abort returned %s", symcomm_result_string(w->result));
}

static void round_drain(symcomm_comm_t comm, watchdog_t *w) {
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  int x = 7;
  /* Nobody receives them: the first, eager, ends once put, and the second
   * waits for it to be taken. */
  TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, s));
  TEST_OK(symcomm_send(&x, 1, SYMCOMM_INT32, 1, comm, s));
  pthread_t t;
  pthread_create(&t, NULL, watchdog_main, w);
  __atomic_store_n(&w->go, 1, __ATOMIC_RELEASE);
  /* Destroy waits for the send; only the abort (or the timeout) ends it. */
  TEST_OK(symcomm_comm_destroy(comm));
  pthread_join(t, NULL);
  TEST_ASSERT(w->result == SYMCOMM_OK, "abort during destroy returned %s",
              symcomm_result_string(w->result));
  TEST_EXPECT_RESULT(symcomm_stream_synchronize(s), SYMCOMM_ERR_ABORTED);
  TEST_OK(symcomm_stream_destroy(s));
}

static void round_destroy(symcomm_comm_t comm, watchdog_t *w) {
  pthread_t t;
  pthread_create(&t, NULL, watchdog_main, w);
  usleep(100); /* the watchdog is spinning by now, mostly */
  __atomic_store_n(&w->go, 1, __ATOMIC_RELEASE);
  TEST_OK(symcomm_comm_destroy(comm));
  pthread_join(t, NULL);
  TEST_ASSERT(w->result == SYMCOMM_OK || w->result == SYMCOMM_ERR_INVALID_USAGE,
              "abort racing destroy returned %s", symcomm_result_string(w->result));
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  /* Small windows: each round creates a job. The timeout bounds a round
   * whose abort went missing. */
  setenv("SYMCOMM_COLL_SCRATCH_BYTES", "65536", 0);
  setenv("SYMCOMM_P2P_CHUNK_BYTES", "4096", 0);
  setenv("SYMCOMM_TIMEOUT", "30", 0);
  setenv("SYMCOMM_DEBUG", "NONE", 0); /* every round aborts: no warning per round */
  double t0 = test_now();
  int after_destroy = 0;
  for (int round = 0; round < rounds; round++) {
    rank1_t r1 = {.round_over = 0};
    pthread_mutex_init(&r1.lock, NULL);
    pthread_cond_init(&r1.cond, NULL);
    TEST_OK(symcomm_get_unique_id(&r1.id));
    pthread_t t1;
    pthread_create(&t1, NULL, rank1_main, &r1);
    symcomm_comm_t comm;
    TEST_OK(symcomm_comm_init(&comm, 2, &r1.id, 0, NULL));
    /* Delays up to 2 ms after the call starts, or none for a bare destroy
     * (it is quick): before, during and after the call it races. */
    unsigned seed = (unsigned)round * 2654435761u;
    watchdog_t w = {.comm = comm, .delay_us = round % 3 == 2 ? 0 : (unsigned)rand_r(&seed) % 2000};
    if (round % 3 == 0)
      round_split(comm, &w);
    else if (round % 3 == 1)
      round_drain(comm, &w);
    else
      round_destroy(comm, &w);
    after_destroy += w.result == SYMCOMM_ERR_INVALID_USAGE;
    pthread_mutex_lock(&r1.lock);
    r1.round_over = 1;
    pthread_cond_signal(&r1.cond);
    pthread_mutex_unlock(&r1.lock);
    pthread_join(t1, NULL);
    TEST_ASSERT(r1.init == SYMCOMM_OK, "rank 1's init: %s", symcomm_result_string(r1.init));
    pthread_cond_destroy(&r1.cond);
    pthread_mutex_destroy(&r1.lock);
  }
  printf("ok: %d rounds of init/split/abort/destroy in %.1f s (%d aborts came after destroy)\n",
         rounds, test_now() - t0, after_destroy);
  return 0;
}
