/* A failure that a rank hears of from a peer's mark on the device, before any
 * news from the root, still makes its communicator refuse every later call at
 * once:
 *   test_relay_faults   the root runs in a process of its own (a unique id),
 *                       stopped (SIGSTOP) once 4 ranks are in; rank 3 stays
 *                       away from an all-reduce, rank 1 aborts while waiting in
 *                       it. Ranks 0 and 2 hear of it through the all-reduce's
 *                       barrier only: their all-reduce fails naming rank 1, and
 *                       their next call (a send on a stream that never failed)
 *                       is refused by the call itself, naming rank 1.
 * Then the root resumes and every process ends. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define NRANKS 4
#define COUNT 512

typedef enum { REPORT_READY = 1, REPORT_FAILED, REPORT_REFUSED } report_kind_t;

typedef struct report {
  int rank;
  int kind;
  int result;
  char why[600];
} report_t;

static int reports[2];        /* ranks -> parent */
static int go[NRANKS][2];     /* parent -> each rank */
static int me;

static void report(int kind, int result, const char *why) {
  report_t r = {.rank = me, .kind = kind, .result = result};
  snprintf(r.why, sizeof(r.why), "%s", why != NULL ? why : "");
  TEST_ASSERT(write(reports[1], &r, sizeof(r)) == (ssize_t)sizeof(r));
}

static void wait_for_byte(int fd) {
  char byte;
  while (read(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

static int32_t value(int rank, int i) { return (int32_t)((rank + 3) * 4099 + i * 13) % 65536; }

static symcomm_result_t allreduce(symcomm_comm_t comm, symcomm_stream_t stream, int32_t *send,
                                  int32_t *recv) {
  for (int i = 0; i < COUNT; i++)
    send[i] = value(me, i);
  symcomm_result_t r = symcomm_allreduce(send, recv, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
  if (r != SYMCOMM_OK)
    return r;
  r = symcomm_stream_synchronize(stream);
  for (int i = 0; r == SYMCOMM_OK && i < COUNT; i++) {
    int32_t want = 0;
    for (int q = 0; q < NRANKS; q++)
      want += value(q, i);
    TEST_ASSERT(recv[i] == want, "element %d: %d, expected %d", i, recv[i], want);
  }
  return r;
}

static symcomm_comm_t the_comm;

static void *aborter(void *arg) {
  (void)arg;
  usleep(300 * 1000); /* the main thread waits in the all-reduce by now */
  TEST_OK(symcomm_comm_abort(the_comm));
  return NULL;
}

static int rank_main(const symcomm_unique_id_t *id) {
  symcomm_stream_t stream, spare;
  TEST_OK(symcomm_comm_init(&the_comm, NRANKS, id, me, NULL));
  TEST_OK(symcomm_stream_create(the_comm, &stream));
  TEST_OK(symcomm_stream_create(the_comm, &spare));
  int32_t *send = calloc(COUNT, sizeof(int32_t)), *recv = calloc(COUNT, sizeof(int32_t));
  for (int it = 0; it < 3; it++)
    TEST_OK(allreduce(the_comm, stream, send, recv));
  report(REPORT_READY, 0, NULL);
  wait_for_byte(go[me][0]); /* the root is stopped now */
  if (me == 3) {
    wait_for_byte(go[me][0]); /* until ranks 0 and 2 reported */
  } else {
    pthread_t thread;
    if (me == 1)
      pthread_create(&thread, NULL, aborter, NULL);
    symcomm_result_t r = allreduce(the_comm, stream, send, recv);
    TEST_ASSERT(r != SYMCOMM_OK, "an all-reduce without rank 3 succeeded");
    if (me == 1) {
      pthread_join(thread, NULL);
    } else {
      report(REPORT_FAILED, r, symcomm_last_error(the_comm));
      /* Refused by the call, not queued to fail later: the spare stream
       * never failed, and the root has said nothing. (A send: a collective
       * is refused anyway after its predecessor's stream stopped.) */
      r = symcomm_send(send, COUNT, SYMCOMM_INT32, (me + 1) % NRANKS, the_comm, spare);
      report(REPORT_REFUSED, r, symcomm_last_error(the_comm));
    }
  }
  wait_for_byte(go[me][0]); /* everyone may leave */
  symcomm_stream_synchronize(spare); /* whatever it holds ends: the communicator failed */
  TEST_OK(symcomm_stream_destroy(spare));
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(the_comm));
  free(send);
  free(recv);
  return 0;
}

int main(void) {
  unsetenv("SYMCOMM_TIMEOUT");
  int idpipe[2];
  TEST_ASSERT(pipe(idpipe) == 0 && pipe(reports) == 0);
  pid_t root = fork();
  TEST_ASSERT(root >= 0);
  if (root == 0) {
    symcomm_unique_id_t id;
    TEST_OK(symcomm_get_unique_id(&id)); /* its root serves the job from a thread of this process */
    TEST_ASSERT(write(idpipe[1], &id, sizeof(id)) == (ssize_t)sizeof(id));
    for (;;)
      pause();
  }
  symcomm_unique_id_t id;
  TEST_ASSERT(read(idpipe[0], &id, sizeof(id)) == (ssize_t)sizeof(id));
  pid_t pids[NRANKS];
  for (int r = 0; r < NRANKS; r++) {
    TEST_ASSERT(pipe(go[r]) == 0);
    pids[r] = fork();
    TEST_ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      me = r;
      close(reports[0]);
      exit(rank_main(&id));
    }
  }
  close(reports[1]);
  report_t failed[NRANKS] = {0}, refused[NRANKS] = {0};
  int ready = 0, nfailed = 0, nrefused = 0;
  while (nfailed < 2 || nrefused < 2) {
    report_t r;
    ssize_t n = read(reports[0], &r, sizeof(r));
    TEST_ASSERT(n == (ssize_t)sizeof(r), "a rank stopped reporting");
    if (r.kind == REPORT_READY && ++ready == NRANKS) {
      TEST_ASSERT(kill(root, SIGSTOP) == 0);
      for (int q = 0; q < NRANKS; q++)
        TEST_ASSERT(write(go[q][1], "g", 1) == 1);
    } else if (r.kind == REPORT_FAILED) {
      failed[r.rank] = r;
      nfailed++;
      printf("rank %d: %s: %s\n", r.rank, symcomm_result_string(r.result), r.why);
    } else if (r.kind == REPORT_REFUSED) {
      refused[r.rank] = r;
      nrefused++;
      printf("rank %d, the next call: %s: %s\n", r.rank, symcomm_result_string(r.result), r.why);
    }
  }
  bool ok = true;
  for (int q = 0; q <= 2; q += 2)
    ok = ok && test_contains(failed[q].why, "rank 1") && refused[q].result != SYMCOMM_OK &&
         test_contains(refused[q].why, "rank 1");
  if (!ok) { /* a call that was queued would wait for the stopped job: end it */
    for (int q = 0; q < NRANKS; q++)
      kill(pids[q], SIGKILL);
    kill(root, SIGKILL);
  }
  for (int q = 0; q <= 2; q += 2) {
    TEST_ASSERT(test_contains(failed[q].why, "rank 1"), "rank %d: %s", q, failed[q].why);
    TEST_ASSERT(refused[q].result != SYMCOMM_OK,
                "rank %d's send after the relayed failure was accepted", q);
    TEST_ASSERT(test_contains(refused[q].why, "rank 1"), "rank %d: %s", q, refused[q].why);
  }
  TEST_ASSERT(kill(root, SIGCONT) == 0);
  TEST_ASSERT(write(go[3][1], "g", 1) == 1); /* rank 3 goes on to the end */
  for (int q = 0; q < NRANKS; q++)
    TEST_ASSERT(write(go[q][1], "g", 1) == 1);
  test_reap_ranks(pids, NRANKS, -1);
  TEST_ASSERT(kill(root, SIGKILL) == 0);
  TEST_ASSERT(waitpid(root, NULL, 0) == root);
  printf("test_relay_faults: a failure relayed through a barrier is refused at once\n");
  return 0;
}
