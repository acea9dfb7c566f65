/* A rank that leaves on purpose (symcomm_comm_destroy) in a job of 4 ranks
 * started by hand, with the default SYMCOMM_TIMEOUT (300 s):
 *   test_rank_leave coll V     rank V destroys its communicator and exits(1)
 *                              before all-reduce #50 of a loop: every other
 *                              rank's all-reduce fails within 2 s, saying
 *                              that rank V left during all-reduce #50
 *   test_rank_leave p2p V      the same in a ring of sends and receives
 *   test_rank_leave orderly N  N jobs of all-reduces and sends and receives,
 *                              then every rank destroys after a random pause
 *                              (a random order): no call fails anywhere
 *   test_rank_leave p2p_after  rank 0 destroys after some all-reduces; ranks
 *                              1 and 2 then exchange messages of every size
 *                              without error, and rank 3's next all-reduce
 *                              fails naming rank 0 as having left
 * The ranks report to this program (their parent) through a pipe. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define NRANKS 4
#define COUNT 1000
#define LEAVE_AT 50
#define DETECT_LIMIT_S 2.0 /* the bound from the departure to every rank's failure */
#define AFTER_MAX_COUNT (300 * 1024) /* p2p_after: up to 1.2 MB, several 512 KiB chunks */

typedef enum { REPORT_LEFT = 1, REPORT_FAILED, REPORT_REFUSED, REPORT_DONE } report_kind_t;

typedef struct report {
  int rank;
  int kind;
  int result;
  int iteration;
  double t;
  char why[512];
} report_t;

static const char *scenario;
static int victim = -1;
static int me;
static int reports[2];
static int go[2];
static int job_index; /* orderly: which of the jobs */

static void report(int kind, int result, int iteration, double t, const char *why) {
  report_t r = {.rank = me, .kind = kind, .result = result, .iteration = iteration, .t = t};
  snprintf(r.why, sizeof(r.why), "%s", why != NULL ? why : "");
  TEST_ASSERT(write(reports[1], &r, sizeof(r)) == (ssize_t)sizeof(r));
}

static int32_t value(int rank, int iteration, int i) {
  return (int32_t)(((rank + 1) * 1000003 + iteration * 7919 + i * 31) % 100000);
}

typedef struct rank_state {
  symcomm_comm_t comm;
  symcomm_stream_t stream;
  int32_t *send, *recv;
} rank_state_t;

static symcomm_result_t check_synced(rank_state_t *st, symcomm_result_t r) {
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(st->stream);
  return r;
}

static symcomm_result_t allreduce_step(rank_state_t *st, int it) {
  for (int i = 0; i < COUNT; i++) {
    st->send[i] = value(me, it, i);
    st->recv[i] = -1;
  }
  symcomm_result_t r = check_synced(st, symcomm_allreduce(st->send, st->recv, COUNT, SYMCOMM_INT32,
                                                          SYMCOMM_SUM, st->comm, st->stream));
  if (r != SYMCOMM_OK)
    return r;
  for (int i = 0; i < COUNT; i++) {
    int32_t want = 0;
    for (int q = 0; q < NRANKS; q++)
      want += value(q, it, i);
    TEST_ASSERT(st->recv[i] == want, "all-reduce %d element %d: %d, expected %d", it, i,
                st->recv[i], want);
  }
  return SYMCOMM_OK;
}

/* Sends `count` elements to `to` and receives as many from `from`, in one
 * group; checks what arrived. */
static symcomm_result_t exchange(rank_state_t *st, int it, int to, int from, size_t count) {
  for (size_t i = 0; i < count; i++) {
    st->send[i] = value(me, it, (int)i);
    st->recv[i] = -1;
  }
  TEST_OK(symcomm_group_start());
  symcomm_result_t r = symcomm_send(st->send, count, SYMCOMM_INT32, to, st->comm, st->stream);
  if (r == SYMCOMM_OK)
    r = symcomm_recv(st->recv, count, SYMCOMM_INT32, from, st->comm, st->stream);
  symcomm_result_t end = symcomm_group_end();
  r = check_synced(st, r != SYMCOMM_OK ? r : end);
  if (r != SYMCOMM_OK)
    return r;
  for (size_t i = 0; i < count; i++)
    TEST_ASSERT(st->recv[i] == value(from, it, (int)i), "exchange %d element %zu from rank %d", it,
                i, from);
  return SYMCOMM_OK;
}

static void wait_for_byte(int fd) {
  char byte;
  while (read(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

static void setup(rank_state_t *st, size_t count) {
  TEST_OK(symcomm_init_from_env(&st->comm, NULL));
  TEST_OK(symcomm_stream_create(st->comm, &st->stream));
  st->send = calloc(count, sizeof(int32_t));
  st->recv = calloc(count, sizeof(int32_t));
}

static void finish(rank_state_t *st) {
  TEST_OK(symcomm_stream_destroy(st->stream));
  TEST_OK(symcomm_comm_destroy(st->comm));
  free(st->send);
  free(st->recv);
}

/* coll V, p2p V: the victim leaves before step LEAVE_AT; the others fail. */
static int rank_leave(bool p2p) {
  rank_state_t st;
  setup(&st, COUNT);
  int right = (me + 1) % NRANKS, left = (me + NRANKS - 1) % NRANKS;
  symcomm_result_t r = SYMCOMM_OK;
  int it = 0;
  for (;; it++) {
    if (me == victim && it == LEAVE_AT) {
      /* The usual end of a failing rank: its destructors destroy, it exits. */
      report(REPORT_LEFT, 0, it, test_now(), NULL);
      finish(&st);
      exit(1);
    }
    r = p2p ? exchange(&st, it, right, left, COUNT) : allreduce_step(&st, it);
    if (r != SYMCOMM_OK)
      break;
    TEST_ASSERT(it <= LEAVE_AT, "rank %d finished step %d without rank %d", me, it, victim);
  }
  report(REPORT_FAILED, r, it, test_now(), symcomm_last_error(st.comm));
  symcomm_result_t again = allreduce_step(&st, it + 1);
  report(REPORT_REFUSED, again, it + 1, test_now(), symcomm_last_error(st.comm));
  /* It leaves too, as a failing rank would: ranks still waiting for it
   * hear that, if nothing else ended their wait. */
  finish(&st);
  return 0;
}

/* orderly: everything succeeds, whatever order the ranks leave in. */
static int rank_orderly(void) {
  srand((unsigned)getpid());
  rank_state_t st;
  setup(&st, COUNT);
  int right = (me + 1) % NRANKS, left = (me + NRANKS - 1) % NRANKS;
  for (int it = 0; it < 20; it++) {
    TEST_OK(allreduce_step(&st, it));
    TEST_OK(exchange(&st, it, right, left, COUNT));
  }
  /* The last step, left to run while the rank leaves: some ranks have all
   * they need of a peer only after that peer is gone. */
  bool last_p2p = job_index % 2 == 1; /* the same on every rank */
  (void)(last_p2p ? exchange(&st, 20, right, left, COUNT) : allreduce_step(&st, 20));
  usleep((useconds_t)(rand() % 4 == 0 ? 0 : rand() % 30000));
  finish(&st);
  report(REPORT_DONE, 0, 21, test_now(), NULL);
  return 0;
}

/* p2p_after: rank 0 leaves; 1 and 2 go on; 3's all-reduce needs rank 0. */
static int rank_p2p_after(void) {
  rank_state_t st;
  setup(&st, AFTER_MAX_COUNT);
  for (int it = 0; it < 5; it++)
    TEST_OK(allreduce_step(&st, it));
  if (me == 0) {
    report(REPORT_LEFT, 0, 5, test_now(), NULL);
    finish(&st);
    wait_for_byte(go[0]); /* its process, which serves the root, stays */
    return 0;
  }
  usleep(500 * 1000); /* the departure has reached every rank by now */
  if (me == 3) {
    symcomm_result_t r = allreduce_step(&st, 5);
    report(REPORT_FAILED, r, 5, test_now(), symcomm_last_error(st.comm));
  } else {
    size_t sizes[] = {0, 1, 1000, 131072, AFTER_MAX_COUNT};
    for (int it = 0; it < 100; it++)
      TEST_OK(exchange(&st, it, 3 - me, 3 - me, sizes[it % 5]));
    report(REPORT_DONE, 0, 100, test_now(), NULL);
  }
  wait_for_byte(go[0]);
  finish(&st);
  return 0;
}

/* ------------------------------------------------------------ parent */

static pid_t start_rank(int rank, int port) {
  fflush(stdout); /* a child must not print the parent's lines again */
  pid_t pid = fork();
  TEST_ASSERT(pid >= 0);
  if (pid != 0)
    return pid;
  test_set_rank_env(rank, NRANKS, port); /* what a user would set by hand */
  unsetenv("SYMCOMM_TIMEOUT"); /* the default, 300 s */
  me = rank;
  close(reports[0]);
  close(go[1]);
  if (strcmp(scenario, "coll") == 0 || strcmp(scenario, "p2p") == 0)
    exit(rank_leave(scenario[0] == 'p'));
  exit(strcmp(scenario, "orderly") == 0 ? rank_orderly() : rank_p2p_after());
}

static void read_report(report_t *r, double deadline) {
  for (;;) {
    ssize_t n = read(reports[0], r, sizeof(*r));
    if (n == (ssize_t)sizeof(*r))
      return;
    TEST_ASSERT(n < 0 && errno == EINTR && test_now() < deadline, "a rank stopped reporting");
  }
}

/* One job; returns the reports, indexed by kind and rank. */
static void run_job(report_t out[][NRANKS], int expected) {
  TEST_ASSERT(pipe(reports) == 0 && pipe(go) == 0);
  int port = test_free_port();
  pid_t pids[NRANKS];
  for (int r = 0; r < NRANKS; r++)
    pids[r] = start_rank(r, port);
  close(reports[1]);
  close(go[0]);
  double deadline = test_now() + 60;
  report_t r;
  for (int got = 0; got < expected; got++) {
    read_report(&r, deadline);
    out[r.kind][r.rank] = r;
    if (r.kind == REPORT_FAILED || r.kind == REPORT_REFUSED)
      printf("rank %d: %s in step %d: %s\n", r.rank, symcomm_result_string(r.result), r.iteration,
             r.why);
  }
  if (strcmp(scenario, "p2p_after") == 0) {
    /* The others have gone already. One write for all: a byte at a time,
     * the last could find every reader gone (SIGPIPE). */
    char gos[NRANKS];
    memset(gos, 'g', sizeof(gos));
    TEST_ASSERT(write(go[1], gos, sizeof(gos)) == (ssize_t)sizeof(gos));
  }
  for (int q = 0; q < NRANKS; q++) {
    int status;
    TEST_ASSERT(waitpid(pids[q], &status, 0) == pids[q]);
    int want = q == victim ? 1 : 0;
    TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == want, "rank %d ended with status %d",
                q, status);
  }
  close(reports[0]);
  close(go[1]);
}

static void check_leave(void) {
  static report_t out[REPORT_DONE + 1][NRANKS];
  memset(out, 0, sizeof(out));
  run_job(out, 1 + 2 * (NRANKS - 1));
  double left_t = out[REPORT_LEFT][victim].t, worst = 0;
  TEST_ASSERT(left_t > 0);
  char named[96];
  snprintf(named, sizeof(named), "rank %d left (destroyed its communicator)", victim);
  for (int q = 0; q < NRANKS; q++) {
    if (q == victim)
      continue;
    const report_t *f = &out[REPORT_FAILED][q], *again = &out[REPORT_REFUSED][q];
    TEST_ASSERT(f->result == SYMCOMM_ERR_REMOTE, "rank %d: %s", q, symcomm_result_string(f->result));
    /* In a ring, a rank that waits for nothing of the victim may finish
     * step 50 and then wait for a neighbour that failed: it hears that the
     * neighbour left (or, relayed, why the neighbour gave up). So may the
     * rank that sends to the victim: its send ends once put (within a host,
     * eagerly; these messages are 4000 bytes), and its next send waits for
     * the victim to take it, or for the neighbour that failed and left. */
    bool receives_from_victim = q == (victim + 1) % NRANKS;
    bool direct = strcmp(scenario, "coll") == 0 || receives_from_victim;
    TEST_ASSERT(f->iteration == LEAVE_AT || (!direct && f->iteration == LEAVE_AT + 1),
                "rank %d failed in step %d", q, f->iteration);
    TEST_ASSERT(test_contains(f->why, direct ? named : "left (destroyed its communicator)"),
                "rank %d's sentence: %s", q, f->why);
    if (strcmp(scenario, "coll") == 0)
      TEST_ASSERT(test_contains(f->why, "during all-reduce #50"), "rank %d's sentence: %s", q, f->why);
    else if (direct)
      TEST_ASSERT(test_contains(f->why, "send #50") || test_contains(f->why, "receive #50"),
                  "rank %d's sentence: %s", q, f->why);
    TEST_ASSERT(again->result != SYMCOMM_OK && test_contains(again->why, direct ? named : "left"),
                "rank %d's later call: %s", q, again->why);
    double dt = f->t - left_t;
    printf("rank %d failed %.3f s after rank %d began to leave\n", q, dt, victim);
    worst = dt > worst ? dt : worst;
    TEST_ASSERT(dt < DETECT_LIMIT_S, "rank %d noticed the departure after %.3f s", q, dt);
  }
  printf("%s: rank %d's destroy and exit noticed by every other rank within %.3f s\n", scenario,
         victim, worst);
}

static void check_orderly(int jobs) {
  static report_t out[REPORT_DONE + 1][NRANKS];
  for (int j = 0; j < jobs; j++) {
    job_index = j;
    memset(out, 0, sizeof(out));
    run_job(out, NRANKS);
    double first = 1e30, last = 0;
    for (int q = 0; q < NRANKS; q++) {
      TEST_ASSERT(out[REPORT_DONE][q].kind == REPORT_DONE, "rank %d did not finish", q);
      first = out[REPORT_DONE][q].t < first ? out[REPORT_DONE][q].t : first;
      last = out[REPORT_DONE][q].t > last ? out[REPORT_DONE][q].t : last;
    }
    printf("job %d: every rank destroyed without error (%.1f ms apart)\n", j,
           (last - first) * 1000);
  }
}

static void check_p2p_after(void) {
  static report_t out[REPORT_DONE + 1][NRANKS];
  memset(out, 0, sizeof(out));
  run_job(out, 4);
  TEST_ASSERT(out[REPORT_DONE][1].kind == REPORT_DONE && out[REPORT_DONE][2].kind == REPORT_DONE);
  const report_t *f = &out[REPORT_FAILED][3];
  TEST_ASSERT(f->result == SYMCOMM_ERR_REMOTE, "rank 3: %s", symcomm_result_string(f->result));
  TEST_ASSERT(test_contains(f->why, "rank 0 left (destroyed its communicator) during all-reduce #5"),
              "rank 3's sentence: %s", f->why);
  printf("p2p_after: ranks 1 and 2 exchanged 100 messages after rank 0 left\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_rank_leave coll V|p2p V|orderly N|p2p_after\n");
    return 2;
  }
  scenario = argv[1];
  if (strcmp(scenario, "coll") == 0 || strcmp(scenario, "p2p") == 0) {
    TEST_ASSERT(argc > 2);
    victim = atoi(argv[2]);
    check_leave();
  } else if (strcmp(scenario, "orderly") == 0) {
    check_orderly(argc > 2 ? atoi(argv[2]) : 20);
  } else {
    check_p2p_after();
  }
  return 0;
}
