/* A rank that dies while its communicator is being made or changed, in a job
 * started by hand (SYMCOMM_RANK, SYMCOMM_WORLD_SIZE, SYMCOMM_ADDR) with the
 * default SYMCOMM_TIMEOUT (300 s):
 *   test_setup_faults init V      rank V dies while passing the memory handles
 *                                 of init's send/recv windows (after its first
 *                                 connection to a peer of its host)
 *   test_setup_faults window V    the same during the first window_alloc
 *   test_setup_faults split V     rank V dies as it first reaches the root of its
 *                                 new communicator (colors and roots gathered):
 *                                 split(color = rank % 2)
 *   test_setup_faults root_split  rank 0, whose process serves the root, dies
 *                                 while the others wait in split
 *   test_setup_faults root_window the same in window_alloc
 *   test_setup_faults root_check  SYMCOMM_CHECK=1: the same in an all-reduce, whose
 *                                 calls are compared through the root
 *   test_setup_faults root_exit   rank 0 returns from main instead (without
 *                                 destroying) while the others wait in
 *                                 window_alloc: the sentence says its process,
 *                                 which served the root, ended
 * Every other rank whose call waited for the dead one fails within 2 s of the
 * death with REMOTE, naming "rank V exited" and the operation (a call made
 * after the news may say "failed earlier" instead); its next call is refused
 * naming the rank, and every process exits.
 *
 * The victim dies by its own hand at the chosen moment: this program replaces
 * connect() (the library's calls reach this definition first). */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define NRANKS 4
#define COUNT 256
#define DETECT_LIMIT_S 2.0 /* the bound from a death to every rank's failure */

typedef enum { REPORT_DEATH = 1, REPORT_FAILED, REPORT_REFUSED, REPORT_DONE } report_kind_t;

typedef struct report {
  int rank;
  int kind;
  int result;
  double t;
  char why[700];
} report_t;

static int reports[2]; /* ranks -> parent */
static int go[2];      /* parent -> ranks: they may leave */
static int me = -1;

/* The victim's moment (only in its process): the Nth AF_UNIX connect from
 * now, or the first TCP connect to a port other than the job's root. */
static int die_at_unix;
static int die_tcp_except;

static void report(int kind, int result, const char *why) {
  report_t r = {.rank = me, .kind = kind, .result = result, .t = test_now()};
  snprintf(r.why, sizeof(r.why), "%s", why != NULL ? why : "");
  TEST_ASSERT(write(reports[1], &r, sizeof(r)) == (ssize_t)sizeof(r));
}

static void die_now(void) {
  report(REPORT_DEATH, 0, NULL);
  raise(SIGKILL);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  static int (*real)(int, const struct sockaddr *, socklen_t);
  if (real == NULL)
    real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
  if (addr->sa_family == AF_UNIX && __atomic_load_n(&die_at_unix, __ATOMIC_ACQUIRE) > 0 &&
      __atomic_sub_fetch(&die_at_unix, 1, __ATOMIC_ACQ_REL) == 0)
    die_now();
  int except = __atomic_load_n(&die_tcp_except, __ATOMIC_ACQUIRE);
  if (addr->sa_family == AF_INET && except > 0 &&
      ntohs(((const struct sockaddr_in *)addr)->sin_port) != except)
    die_now();
  return real(fd, addr, len);
}

static void wait_for_byte(int fd) {
  char byte;
  while (read(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

/* An all-reduce of rank-dependent data, checked. */
static symcomm_result_t allreduce_checked(symcomm_comm_t comm, symcomm_stream_t stream) {
  int32_t send[COUNT], recv[COUNT];
  for (int i = 0; i < COUNT; i++)
    send[i] = (me + 1) * 1009 + i * 7;
  symcomm_result_t r = symcomm_allreduce(send, recv, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(stream);
  for (int i = 0; r == SYMCOMM_OK && i < COUNT; i++) {
    int32_t want = 0;
    for (int q = 0; q < NRANKS; q++)
      want += (q + 1) * 1009 + i * 7;
    TEST_ASSERT(recv[i] == want, "element %d: %d, expected %d", i, recv[i], want);
  }
  return r;
}

static int rank_main(const char *s, int victim, int port) {
  bool victim_here = me == victim;
  if (strcmp(s, "init") == 0 && victim_here)
    die_at_unix = 2;
  symcomm_comm_t comm = NULL;
  symcomm_result_t r = symcomm_init_from_env(&comm, NULL);
  if (r != SYMCOMM_OK) {
    report(REPORT_FAILED, r, symcomm_last_error(NULL));
    report(REPORT_REFUSED, SYMCOMM_ERR_REMOTE, "init failed: there is nothing to call");
    wait_for_byte(go[0]);
    return 0;
  }
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  TEST_OK(allreduce_checked(comm, stream)); /* every rank is in, and the root is served */
  if (victim_here && strcmp(s, "window") == 0)
    __atomic_store_n(&die_at_unix, 2, __ATOMIC_RELEASE);
  if (victim_here && strcmp(s, "split") == 0)
    __atomic_store_n(&die_tcp_except, port, __ATOMIC_RELEASE);
  bool in_split = strcmp(s, "split") == 0 || strcmp(s, "root_split") == 0;
  if (victim_here && strncmp(s, "root_", 5) == 0) {
    usleep(300 * 1000); /* the others wait in the call by now */
    if (strcmp(s, "root_exit") == 0) {
      report(REPORT_DEATH, 0, NULL);
      exit(0); /* symcomm's exit handler leaves for it */
    }
    die_now();
  }
  symcomm_comm_t child = NULL;
  symcomm_window_t win = NULL;
  if (in_split)
    r = symcomm_comm_split(comm, me % 2, me, &child);
  else if (strcmp(s, "root_check") == 0)
    r = allreduce_checked(comm, stream);
  else
    r = symcomm_window_alloc(comm, COUNT * sizeof(int32_t), &win);
  TEST_ASSERT(!victim_here, "the victim lived through its call");
  if (r == SYMCOMM_OK) {
    /* This rank's call did not need the dead one (the other color of a
     * split): the parent's next collective does. */
    report(REPORT_DONE, r, NULL);
    r = allreduce_checked(comm, stream);
    TEST_ASSERT(r != SYMCOMM_OK, "an all-reduce without rank %d succeeded", victim);
  }
  report(REPORT_FAILED, r, symcomm_last_error(comm));
  symcomm_result_t again = allreduce_checked(comm, stream);
  report(REPORT_REFUSED, again, symcomm_last_error(comm));
  wait_for_byte(go[0]);
  if (child != NULL)
    TEST_OK(symcomm_comm_destroy(child));
  if (win != NULL)
    symcomm_window_free(win); /* refused or not: destroy releases it */
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  return 0;
}

static pid_t start_rank(const char *s, int victim, int rank, int port) {
  pid_t pid = fork();
  TEST_ASSERT(pid >= 0);
  if (pid != 0)
    return pid;
  test_set_rank_env(rank, NRANKS, port);
  me = rank;
  close(reports[0]);
  close(go[1]);
  exit(rank_main(s, victim, port));
}

static void read_report(report_t *r, double deadline) {
  for (;;) {
    ssize_t n = read(reports[0], r, sizeof(*r));
    if (n == (ssize_t)sizeof(*r))
      return;
    TEST_ASSERT(n < 0 && errno == EINTR && test_now() < deadline,
                "a rank stopped reporting (a wait that the death should have ended?)");
  }
}

static int run(const char *s, int victim) {
  const char *op = strcmp(s, "init") == 0                                  ? "during init"
                   : strcmp(s, "split") == 0 || strcmp(s, "root_split") == 0 ? "during split"
                   : strcmp(s, "root_check") == 0                            ? "during symcomm_allreduce"
                                                                             : "during window creation";
  unsetenv("SYMCOMM_TIMEOUT");
  if (strcmp(s, "root_check") == 0)
    setenv("SYMCOMM_CHECK", "1", 1);
  TEST_ASSERT(pipe(reports) == 0 && pipe(go) == 0);
  int port = test_free_port();
  pid_t pids[NRANKS];
  for (int r = 0; r < NRANKS; r++)
    pids[r] = start_rank(s, victim, r, port);
  close(reports[1]);
  close(go[0]);
  /* Far below the 150 s or 300 s the waits took before. */
  double deadline = test_now() + 30;
  report_t failed[NRANKS] = {0}, refused[NRANKS] = {0};
  bool done[NRANKS] = {false};
  double death_t = -1;
  int nfailed = 0, nrefused = 0;
  while (nfailed < NRANKS - 1 || nrefused < NRANKS - 1 || death_t < 0) {
    report_t r;
    read_report(&r, deadline);
    if (r.kind == REPORT_DEATH) {
      death_t = r.t;
    } else if (r.kind == REPORT_DONE) {
      done[r.rank] = true;
    } else if (r.kind == REPORT_FAILED) {
      failed[r.rank] = r;
      nfailed++;
      printf("rank %d: %s: %s\n", r.rank, symcomm_result_string(r.result), r.why);
    } else {
      refused[r.rank] = r;
      nrefused++;
    }
  }
  /* One write for every rank: written a byte at a time, the last could find
   * every survivor gone already (the victim is dead) and end this process
   * with SIGPIPE (seen once in CI). */
  char gos[NRANKS];
  memset(gos, 'g', sizeof(gos));
  TEST_ASSERT(write(go[1], gos, sizeof(gos)) == (ssize_t)sizeof(gos));
  bool exits = strcmp(s, "root_exit") == 0;
  test_reap_ranks(pids, NRANKS, exits ? -1 : victim);
  char who[32];
  snprintf(who, sizeof(who), "rank %d exited", victim);
  double worst = 0;
  int waited = 0;
  for (int q = 0; q < NRANKS; q++) {
    if (q == victim)
      continue;
    const report_t *f = &failed[q];
    TEST_ASSERT(f->result == SYMCOMM_ERR_REMOTE, "rank %d got %s: %s", q,
                symcomm_result_string(f->result), f->why);
    TEST_ASSERT(test_contains(f->why, who), "rank %d's sentence does not say %s: %s", q, who, f->why);
    if (victim == 0) /* its process served the root, whose connection is no news */
      TEST_ASSERT(test_contains(f->why, "which served the root") &&
                      !test_contains(f->why, "connection to the root dropped"),
                  "rank %d: %s", q, f->why);
    if (!done[q]) {
      waited++;
      TEST_ASSERT(test_contains(f->why, op) || test_contains(f->why, "failed earlier"),
                  "rank %d's sentence does not name the operation (%s): %s", q, op, f->why);
      double dt = f->t - death_t;
      worst = dt > worst ? dt : worst;
      TEST_ASSERT(dt < DETECT_LIMIT_S, "rank %d's call ended %.3f s after the death", q, dt);
    }
    /* Refused: with the same rank, whether init gave it a communicator or not. */
    TEST_ASSERT(refused[q].result != SYMCOMM_OK, "rank %d's later call succeeded", q);
    if (strcmp(s, "init") != 0)
      TEST_ASSERT(test_contains(refused[q].why, who), "rank %d's later call: %s", q, refused[q].why);
  }
  TEST_ASSERT(waited > 0, "no rank was waiting for rank %d", victim);
  printf("%s: rank %d's death ended %d ranks' calls within %.3f s\n", s, victim, waited, worst);
  close(reports[0]);
  close(go[1]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: test_setup_faults init V|window V|split V|root_split|root_window|root_check|root_exit\n");
    return 2;
  }
  int victim = strncmp(argv[1], "root_", 5) == 0 ? 0 : argc > 2 ? atoi(argv[2]) : -1;
  TEST_ASSERT(victim >= 0 && victim < NRANKS);
  return run(argv[1], victim);
}
