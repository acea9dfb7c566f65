/* Waits of the simulated-GPU backend: a WAIT that times out or is aborted
 * stops its stream for good (later work is not run, events recorded behind it
 * fail, new work is refused); signal and wait between two processes through
 * shared device memory, with the waiter asleep (no CPU) while it waits. */
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_test_util.h"
#include "util/clock.h"
#include "util/error.h"

static const sc_backend_ops_t *B = &sc_backend_host;
static sc_device_t *dev;

static void test_timeout(void) {
  test_pad_t *pad = NULL;
  TEST_OK(B->host_alloc(dev, sizeof(*pad), (void **)&pad));
  pad->slot[0] = 3;
  sc_stream_t *s = NULL, *other = NULL;
  TEST_OK(B->stream_create(dev, &s));
  TEST_OK(B->stream_create(dev, &other));
  sc_event_t *ev = NULL;
  TEST_OK(B->event_create(dev, &ev));

  uint64_t src = 1, marker = 0, other_marker = 0;
  double t0 = test_now();
  launch_wait(s, pad, 0, 5, 200, NULL); /* nobody sets slot 0 to 5 */
  TEST_OK(B->copy(s, &marker, &src, sizeof(src)));
  TEST_OK(B->event_record(ev, s));
  TEST_OK(B->stream_wait_event(other, ev));
  TEST_OK(B->copy(other, &other_marker, &src, sizeof(src)));

  TEST_EXPECT_RESULT(B->stream_synchronize(s, sc_deadline_after(10000)), SYMCOMM_ERR_TIMEOUT);
  double waited = test_now() - t0;
  TEST_ASSERT(waited >= 0.19 && waited < 2.0, "the 200 ms guard fired after %.3f s", waited);
  const char *why = B->stream_error(s);
  TEST_ASSERT(test_contains(why, "without progress") && test_contains(why, "reach 5") &&
                  test_contains(why, "holds 3"),
              "sentence: %s", why);
  TEST_ASSERT(strcmp(sc_error_last(), why) == 0, "synchronize gives the caller the sentence");
  TEST_ASSERT(marker == 0, "work queued behind the failed wait ran");

  /* The stream stays failed: query, synchronize and new work all say so. */
  TEST_EXPECT_RESULT(B->stream_query(s), SYMCOMM_ERR_TIMEOUT);
  TEST_EXPECT_RESULT(B->stream_synchronize(s, SC_DEADLINE_NEVER), SYMCOMM_ERR_TIMEOUT);
  sc_error_clear();
  TEST_EXPECT_RESULT(B->copy(s, &marker, &src, sizeof(src)), SYMCOMM_ERR_TIMEOUT);
  TEST_ASSERT(strcmp(sc_error_last(), why) == 0);

  /* The event recorded behind the failure fails; so does the stream waiting for it. */
  TEST_EXPECT_RESULT(B->event_query(ev), SYMCOMM_ERR_TIMEOUT);
  TEST_EXPECT_RESULT(B->event_synchronize(ev, SC_DEADLINE_NEVER), SYMCOMM_ERR_TIMEOUT);
  TEST_EXPECT_RESULT(B->stream_synchronize(other, sc_deadline_after(10000)), SYMCOMM_ERR_TIMEOUT);
  TEST_ASSERT(test_contains(B->stream_error(other), "the stream that recorded this event failed") &&
                  test_contains(B->stream_error(other), "without progress"),
              "%s", B->stream_error(other));
  TEST_ASSERT(other_marker == 0);
  sc_signal_args_t sig = {
      .slot = &pad->slot[1], .value = 1, .op = SC_SIGNAL_OP_SET, .bell = &pad->bell};
  TEST_EXPECT_RESULT(B->launch(other, SC_PROGRAM_SIGNAL, &sig, sizeof(sig), SC_LAUNCH_ONE(NULL)), SYMCOMM_ERR_TIMEOUT);
  TEST_ASSERT(pad->slot[1] == 0);
  /* A record on a failed stream fails its event at once. */
  sc_event_t *late = NULL;
  TEST_OK(B->event_create(dev, &late));
  TEST_EXPECT_RESULT(B->event_record(late, s), SYMCOMM_ERR_TIMEOUT);
  TEST_EXPECT_RESULT(B->event_query(late), SYMCOMM_ERR_TIMEOUT);

  B->event_destroy(late);
  B->event_destroy(ev);
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  B->stream_destroy(other, SC_DEADLINE_NEVER);
  TEST_ASSERT(marker == 0 && other_marker == 0, "discarded work never runs");
  B->host_free(dev, pad);
}

/* A pad to wait on and a communicator's status block, in host memory the
 * device reaches. */
static void alloc_pad_and_status(test_pad_t **pad, sc_dev_status_t **status) {
  TEST_OK(B->host_alloc(dev, sizeof(**pad), (void **)pad));
  TEST_OK(B->host_alloc(dev, sizeof(**status), (void **)status));
  memset(*status, 0, sizeof(**status));
}

static void free_pad_and_status(test_pad_t *pad, sc_dev_status_t *status) {
  B->host_free(dev, status);
  B->host_free(dev, pad);
}

static void test_abort(void) {
  test_pad_t *pad = NULL;
  sc_dev_status_t *status = NULL;
  alloc_pad_and_status(&pad, &status);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(dev, &s));
  launch_wait(s, pad, 0, 1, 30000, status);
  usleep(250 * 1000);
  TEST_EXPECT_RESULT(B->stream_query(s), SYMCOMM_IN_PROGRESS);
  double t0 = test_now();
  /* no ring: the sleeper must notice alone */
  __atomic_store_n(&status->stop, SC_STOP_ABORTED, __ATOMIC_RELEASE);
  TEST_EXPECT_RESULT(B->stream_synchronize(s, sc_deadline_after(10000)), SYMCOMM_ERR_ABORTED);
  double took = test_now() - t0;
  printf("abort seen after %.0f ms\n", took * 1000);
  TEST_ASSERT(took < 0.5, "the abort took %.3f s to be seen", took);
  TEST_ASSERT(test_contains(B->stream_error(s), "aborted"), "%s", B->stream_error(s));
  /* A stopped communicator stops a wait at once, even one whose condition holds later. */
  sc_stream_t *t = NULL;
  TEST_OK(B->stream_create(dev, &t));
  launch_wait(t, pad, 0, 1, -1, status);
  TEST_EXPECT_RESULT(B->stream_synchronize(t, sc_deadline_after(10000)), SYMCOMM_ERR_ABORTED);
  B->stream_destroy(t, SC_DEADLINE_NEVER);
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  free_pad_and_status(pad, status);
}

/* Another rank's failure, as the host records it in the status block: a wait
 * of a collective ends naming that rank and the collective, and its result
 * says the failure is remote. Not published as this rank's own failure. */
static void test_peer_stop(void) {
  test_pad_t *pad = NULL;
  sc_dev_status_t *status = NULL;
  alloc_pad_and_status(&pad, &status);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(dev, &s));
  sc_wait_args_t w = wait_args(pad, 0, 1, 30000, status);
  w.guard.call = SC_CALL_COLL + 0; /* an all-reduce */
  w.guard.seq = 40432;
  TEST_OK(B->launch(s, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(NULL)));
  usleep(150 * 1000);
  status->rank = 3;
  __atomic_store_n(&status->stop, SC_STOP_PEER_EXITED, __ATOMIC_RELEASE);
  TEST_EXPECT_RESULT(B->stream_synchronize(s, sc_deadline_after(10000)), SYMCOMM_ERR_REMOTE);
  TEST_ASSERT(test_contains(B->stream_error(s), "rank 3 exited during all-reduce #40432"), "%s",
              B->stream_error(s));
  TEST_ASSERT(__atomic_load_n(&status->failed, __ATOMIC_ACQUIRE) == 0, "a stop is not a failure here");
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  free_pad_and_status(pad, status);
}

/* A wait that times out on its own publishes its failure in the status
 * block (once: the first failure stays), for the host to tell the others. */
static void test_publish(void) {
  test_pad_t *pad = NULL;
  sc_dev_status_t *status = NULL;
  alloc_pad_and_status(&pad, &status);
  for (int i = 0; i < 2; i++) {
    sc_stream_t *s = NULL;
    TEST_OK(B->stream_create(dev, &s));
    sc_wait_args_t w = wait_args(pad, 0, 7 + (uint64_t)i, 100, status);
    w.guard.call = SC_CALL_WAIT_SIGNAL;
    TEST_OK(B->launch(s, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(NULL)));
    TEST_EXPECT_RESULT(B->stream_synchronize(s, sc_deadline_after(10000)), SYMCOMM_ERR_TIMEOUT);
    B->stream_destroy(s, SC_DEADLINE_NEVER);
  }
  TEST_ASSERT(__atomic_load_n(&status->failed, __ATOMIC_ACQUIRE) == 2);
  TEST_ASSERT(status->error.kind == SC_DEV_TIMEOUT && status->error.b == 7,
              "kind %d, waited for %lld", status->error.kind, (long long)status->error.b);
  TEST_ASSERT(status->error.call == SC_CALL_WAIT_SIGNAL);
  free_pad_and_status(pad, status);
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

enum { ROUNDS = 2000 };

/* The child: imports the parent's pad, waits asleep for slot 0, then plays
 * ping-pong on slots 1 and 2. */
static void child_main(int fd, size_t bytes) {
  sc_device_t *cdev = NULL;
  TEST_OK(B->device_open(1, &cdev));
  sc_devmem_t *mem = NULL;
  TEST_OK(B->mem_import(cdev, fd, bytes, &mem));
  test_pad_t *pad = B->mem_ptr(mem);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(cdev, &s));

  double t0 = test_now(), c0 = cpu_seconds();
  launch_signal(s, pad, 3, 1, SC_SIGNAL_OP_SET); /* "I am waiting" */
  launch_wait(s, pad, 0, 1, 20000, NULL);
  TEST_OK(B->stream_synchronize(s, sc_deadline_after(30000)));
  double waited = test_now() - t0, cpu = cpu_seconds() - c0;
  printf("child: waited %.3f s using %.1f ms of CPU\n", waited, cpu * 1000);
  TEST_ASSERT(waited >= 0.9, "the wait ended early, after %.3f s", waited);
  TEST_ASSERT(cpu < 0.05, "a sleeping wait used %.1f ms of CPU in %.3f s", cpu * 1000, waited);

  for (uint64_t i = 1; i <= ROUNDS; i++) {
    launch_wait(s, pad, 1, i, 20000, NULL);
    launch_signal(s, pad, 2, i, SC_SIGNAL_OP_SET);
  }
  TEST_OK(B->stream_synchronize(s, sc_deadline_after(60000)));
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  B->mem_free(mem);
  B->device_close(cdev);
  fflush(stdout);
  _exit(0);
}

static void test_two_processes(void) {
  sc_devmem_t *mem = NULL;
  TEST_OK(B->mem_alloc(dev, sizeof(test_pad_t), &mem));
  int fd = -1;
  TEST_OK(B->mem_export(mem, &fd));
  fflush(stdout);
  pid_t child = fork(); /* before this process has any stream thread */
  TEST_ASSERT(child >= 0);
  if (child == 0)
    child_main(fd, sizeof(test_pad_t));
  close(fd);
  test_pad_t *pad = B->mem_ptr(mem);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(dev, &s));
  launch_wait(s, pad, 3, 1, 20000, NULL); /* the child waits now */
  TEST_OK(B->stream_synchronize(s, sc_deadline_after(30000)));
  usleep(1000 * 1000);
  launch_signal(s, pad, 0, 1, SC_SIGNAL_OP_SET);
  double t0 = test_now();
  for (uint64_t i = 1; i <= ROUNDS; i++) {
    launch_signal(s, pad, 1, i, SC_SIGNAL_OP_SET);
    launch_wait(s, pad, 2, i, 20000, NULL);
  }
  TEST_OK(B->stream_synchronize(s, sc_deadline_after(60000)));
  printf("parent: %d ping-pong rounds across processes in %.3f s\n", ROUNDS, test_now() - t0);
  int status = 0;
  TEST_ASSERT(waitpid(child, &status, 0) == child);
  TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  TEST_ASSERT(pad->slot[2] == ROUNDS);
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  B->mem_free(mem);
}

/* A token goes round 16 processes (more than this machine's cores, as in CI)
 * sharing one doorbell: every ring wakes every sleeper, and none may miss it. */
enum { RING_PROCS = 16, RING_LAPS = 100 };

typedef struct ring_pad {
  sc_doorbell_t bell;
  uint64_t slot[RING_PROCS];
} ring_pad_t;

static void ring_member(int fd, int me) {
  sc_device_t *cdev = NULL;
  TEST_OK(B->device_open(me, &cdev));
  sc_devmem_t *mem = NULL;
  TEST_OK(B->mem_import(cdev, fd, sizeof(ring_pad_t), &mem));
  ring_pad_t *pad = B->mem_ptr(mem);
  sc_stream_t *s = NULL;
  TEST_OK(B->stream_create(cdev, &s));
  for (uint64_t lap = 1; lap <= RING_LAPS; lap++) {
    if (me != 0 || lap > 1) {
      sc_wait_args_t w = {.slot = &pad->slot[me],
                          .value = me == 0 ? lap - 1 : lap,
                          .cmp = SC_CMP_OP_EQ,
                          .bell = &pad->bell,
                          .guard = {.status = NULL, .timeout_ms = 20000}};
      TEST_OK(B->launch(s, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(NULL)));
    }
    sc_signal_args_t sig = {.slot = &pad->slot[(me + 1) % RING_PROCS],
                            .value = 1,
                            .op = SC_SIGNAL_OP_ADD,
                            .bell = &pad->bell};
    TEST_OK(B->launch(s, SC_PROGRAM_SIGNAL, &sig, sizeof(sig), SC_LAUNCH_ONE(NULL)));
  }
  if (me == 0) { /* the last lap comes back */
    sc_wait_args_t w = {.slot = &pad->slot[0],
                        .value = RING_LAPS,
                        .cmp = SC_CMP_OP_EQ,
                        .bell = &pad->bell,
                        .guard = {.status = NULL, .timeout_ms = 20000}};
    TEST_OK(B->launch(s, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(NULL)));
  }
  TEST_OK(B->stream_synchronize(s, sc_deadline_after(60000)));
  B->stream_destroy(s, SC_DEADLINE_NEVER);
  B->mem_free(mem);
  B->device_close(cdev);
  _exit(0);
}

static void test_ring_of_processes(void) {
  sc_devmem_t *mem = NULL;
  TEST_OK(B->mem_alloc(dev, sizeof(ring_pad_t), &mem));
  int fd = -1;
  TEST_OK(B->mem_export(mem, &fd));
  fflush(stdout);
  pid_t pids[RING_PROCS];
  double t0 = test_now();
  for (int i = 0; i < RING_PROCS; i++) {
    pids[i] = fork();
    TEST_ASSERT(pids[i] >= 0);
    if (pids[i] == 0)
      ring_member(fd, i);
  }
  close(fd);
  for (int i = 0; i < RING_PROCS; i++) {
    int status = 0;
    TEST_ASSERT(waitpid(pids[i], &status, 0) == pids[i]);
    TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "member %d: status %d", i, status);
  }
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  printf("ring: %d laps of %d processes in %.3f s, %.0f ms of CPU in all\n", RING_LAPS, RING_PROCS,
         test_now() - t0, cpu * 1000);
  ring_pad_t *pad = B->mem_ptr(mem);
  for (int i = 0; i < RING_PROCS; i++)
    TEST_ASSERT(pad->slot[i] == RING_LAPS, "slot %d holds %llu", i,
                (unsigned long long)pad->slot[i]);
  B->mem_free(mem);
}

int main(void) {
  TEST_OK(B->device_open(0, &dev));
  test_two_processes();
  test_ring_of_processes();
  test_timeout();
  test_abort();
  test_peer_stop();
  test_publish();
  B->device_close(dev);
  printf("test_host_waits: all passed\n");
  return 0;
}
