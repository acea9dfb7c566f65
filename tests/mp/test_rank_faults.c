/* A rank that dies, aborts or stops in the middle of a job started by hand
 * (SYMCOMM_RANK, SYMCOMM_WORLD_SIZE, SYMCOMM_ADDR; no supervising launcher),
 * with the default SYMCOMM_TIMEOUT unless said otherwise:
 *   test_rank_faults kill_coll V     kill -9 of rank V during a loop of
 *                                    all-reduces: every other rank's all-reduce
 *                                    fails within 2 s of the kill, naming rank V
 *   test_rank_faults kill_p2p V      the same during a ring of sends and receives
 *   test_rank_faults kill_wait V     the same during a ring of puts into windows
 *                                    and waits for their signals
 *   test_rank_faults abort           rank 1 aborts between two all-reduces: the
 *                                    others' all-reduce (waiting for it) fails
 *                                    within 2 s, naming rank 1
 *   test_rank_faults abort_thread    rank 3 stays away from an all-reduce; a
 *                                    thread of rank 0 aborts while rank 0's main
 *                                    thread waits in it: that wait ends at once
 *                                    (ABORTED), the others' name rank 0
 *   test_rank_faults sigstop         SYMCOMM_TIMEOUT=2; rank 2 is stopped with
 *                                    SIGSTOP until the others' all-reduce timed
 *                                    out, then resumed: it must not finish that
 *                                    all-reduce, and fails too
 *   test_rank_faults sigstop_p2p     the same during a ring of sends and receives
 * TEST_COUNT=N sets the elements (int32) of each message or all-reduce
 * (1000): with SYMCOMM_P2P_LANES, enough for messages in several parts, so
 * that a rank dies or stops while every lane of a pair is mid-message.
 * In every case each rank's later calls are refused with a sentence, every
 * process exits, and nothing of the job is left (no process, no memfd).
 *
 * The ranks' buffers are their device's memory (tests/common/test_device.h),
 * so the same scenarios run on GPUs (SYMCOMM_BACKEND=cuda, 4 GPUs): there
 * the memfd checks do not apply, and tests/gpu/kill9_memory.sh checks that
 * the GPUs' memory is free again.
 *
 * The parent (this program) starts 4 ranks as child processes with the
 * variables a user would set by hand, and the ranks report to it through a
 * pipe: when they are running, when and how their work failed. */
#include <errno.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_device.h"
#include "test_util.h"

#define NRANKS 4
#define COUNT 1000 /* unless TEST_COUNT says otherwise */
static int elems = COUNT;
#define DETECT_LIMIT_S 2.0 /* the issue's bound from the event to every rank's failure */

typedef enum { REPORT_READY = 1, REPORT_FAILED, REPORT_REFUSED, REPORT_EVENT } report_kind_t;

/* One message from a rank, written whole (less than PIPE_BUF). */
typedef struct report {
  int rank;
  int kind;
  int result;
  int iteration; /* the operation that failed */
  double t;      /* test_now() of the failure, or of the event (abort) */
  char why[512];
} report_t;

typedef struct job {
  const char *scenario;
  int victim;
  int reports[2]; /* pipe: ranks -> parent */
  int go[2];      /* pipe: parent -> ranks, one byte each when they may leave */
  int resume[2];  /* pipe: parent -> the rank that stays away (abort_thread) */
} job_t;

/* ------------------------------------------------------------ ranks */

static job_t job;
static int me;

static void report(int kind, int result, int iteration, double t, const char *why) {
  report_t r = {.rank = me, .kind = kind, .result = result, .iteration = iteration, .t = t};
  snprintf(r.why, sizeof(r.why), "%s", why != NULL ? why : "");
  TEST_ASSERT(write(job.reports[1], &r, sizeof(r)) == (ssize_t)sizeof(r));
}

/* Data that depends on the rank, the iteration and the element. */
static int32_t value(int rank, int iteration, int i) {
  return (int32_t)((rank + 1) * 1000003 + iteration * 7919 + i * 31) % 100000;
}

enum { MODE_ALLREDUCE, MODE_P2P, MODE_WINDOW };

typedef struct rank_state {
  symcomm_comm_t comm;
  symcomm_stream_t stream;
  symcomm_window_t win; /* MODE_WINDOW: 4 buffers of `elems`, used in turn */
  int32_t *send, *recv;   /* device memory */
  int32_t *hsend, *hrecv; /* their host copies */
  int in_iteration; /* the iteration being waited for (atomic: the watchdog reads it) */
} rank_state_t;

/* One all-reduce, or one step of a ring; checks what arrived. */
static symcomm_result_t step(rank_state_t *st, int it, int mode) {
  for (int i = 0; i < elems; i++)
    st->hsend[i] = value(me, it, i);
  tdev_upload(st->send, st->hsend, elems * sizeof(int32_t));
  symcomm_result_t r;
  int right = (me + 1) % NRANKS, left = (me + NRANKS - 1) % NRANKS;
  /* A rank is at most 3 steps ahead of its right neighbour's reading (a
   * ring of 4): 4 buffers keep a put off the one being read. */
  size_t slot_bytes = elems * sizeof(int32_t), at = (size_t)(it % 4) * slot_bytes;
  if (mode == MODE_WINDOW) {
    r = symcomm_put_signal(st->win, right, at, st->send, slot_bytes, 0, 1, SYMCOMM_SIGNAL_ADD,
                           st->stream);
    if (r == SYMCOMM_OK)
      r = symcomm_wait_signal(st->win, 0, SYMCOMM_CMP_GE, (uint64_t)it + 1, st->stream);
  } else if (mode == MODE_P2P) {
    TEST_OK(symcomm_group_start());
    r = symcomm_send(st->send, elems, SYMCOMM_INT32, right, st->comm, st->stream);
    if (r == SYMCOMM_OK)
      r = symcomm_recv(st->recv, elems, SYMCOMM_INT32, left, st->comm, st->stream);
    symcomm_result_t end = symcomm_group_end();
    if (r == SYMCOMM_OK)
      r = end;
  } else {
    r = symcomm_allreduce(st->send, st->recv, elems, SYMCOMM_INT32, SYMCOMM_SUM, st->comm,
                          st->stream);
  }
  __atomic_store_n(&st->in_iteration, it, __ATOMIC_RELEASE);
  if (r == SYMCOMM_OK)
    r = symcomm_stream_synchronize(st->stream);
  if (r != SYMCOMM_OK)
    return r;
  const int32_t *got = st->hrecv;
  tdev_download(st->hrecv,
                mode == MODE_WINDOW ? (const void *)((char *)symcomm_window_local(st->win) + at)
                                    : (const void *)st->recv,
                elems * sizeof(int32_t));
  for (int i = 0; i < elems; i++) {
    int32_t want = 0;
    if (mode != MODE_ALLREDUCE)
      want = value(left, it, i);
    else
      for (int q = 0; q < NRANKS; q++)
        want += value(q, it, i);
    TEST_ASSERT(got[i] == want, "iteration %d element %d: %d, expected %d", it, i, got[i], want);
  }
  return SYMCOMM_OK;
}

typedef struct watchdog {
  rank_state_t *st;
  int at_iteration;
} watchdog_t;

/* Aborts once the main thread has waited a while in the given iteration. */
static void *watchdog_main(void *arg) {
  watchdog_t *w = arg;
  while (__atomic_load_n(&w->st->in_iteration, __ATOMIC_ACQUIRE) < w->at_iteration)
    usleep(1000);
  usleep(300 * 1000);
  double t = test_now();
  TEST_OK(symcomm_comm_abort(w->st->comm));
  report(REPORT_EVENT, 0, w->at_iteration, t, "abort");
  return NULL;
}

static void wait_for_byte(int fd) {
  char byte;
  while (read(fd, &byte, 1) < 0 && errno == EINTR) {
  }
}

static int rank_main(void) {
  const char *s = job.scenario;
  int mode = strcmp(s, "kill_p2p") == 0 || strcmp(s, "sigstop_p2p") == 0 ? MODE_P2P
             : strcmp(s, "kill_wait") == 0 ? MODE_WINDOW
                                           : MODE_ALLREDUCE;
  rank_state_t st = {.in_iteration = -1};
  TEST_OK(symcomm_init_from_env(&st.comm, NULL));
  tdev_open(st.comm);
  TEST_OK(symcomm_stream_create(st.comm, &st.stream));
  if (mode == MODE_WINDOW)
    TEST_OK(symcomm_window_alloc(st.comm, 4 * elems * sizeof(int32_t), &st.win));
  st.send = tdev_alloc(elems * sizeof(int32_t));
  st.recv = tdev_alloc(elems * sizeof(int32_t));
  st.hsend = calloc(elems, sizeof(int32_t));
  st.hrecv = calloc(elems, sizeof(int32_t));
  pthread_t dog;
  watchdog_t w = {.st = &st, .at_iteration = 10};
  bool with_dog = strcmp(s, "abort_thread") == 0 && me == 0;
  if (with_dog)
    pthread_create(&dog, NULL, watchdog_main, &w);

  symcomm_result_t r = SYMCOMM_OK;
  int it = 0;
  for (;; it++) {
    if (strcmp(s, "abort") == 0 && me == 1 && it == 20) {
      double t = test_now();
      TEST_OK(symcomm_comm_abort(st.comm));
      report(REPORT_EVENT, 0, it, t, "abort");
    }
    if (strcmp(s, "abort_thread") == 0 && me == 3 && it == 10)
      wait_for_byte(job.resume[0]); /* stays away from all-reduce #10 until the others failed */
    r = step(&st, it, mode);
    if (r != SYMCOMM_OK)
      break;
    if (it == 3) /* says which backend: the parent's checks differ */
      report(REPORT_READY, 0, it, test_now(), tdev_cuda() ? "cuda" : "host");
    if (strcmp(s, "abort_thread") == 0 && me == 3 && it > 10)
      TEST_ASSERT(0, "rank 3 finished iteration %d after rank 0 aborted", it);
  }
  /* The communicator's sentence: a call after the failing one (group_end
   * after a refused send) may have cleared this thread's. */
  report(REPORT_FAILED, r, it, test_now(), symcomm_last_error(st.comm));
  /* Every later call is refused with a sentence. */
  symcomm_result_t again = symcomm_allreduce(st.send, st.recv, elems, SYMCOMM_INT32, SYMCOMM_SUM,
                                             st.comm, st.stream);
  if (again == SYMCOMM_OK)
    again = symcomm_stream_synchronize(st.stream);
  report(REPORT_REFUSED, again, it + 1, test_now(), symcomm_last_error(st.comm));
  if (with_dog)
    pthread_join(dog, NULL);
  wait_for_byte(job.go[0]);
  TEST_OK(symcomm_stream_destroy(st.stream));
  TEST_OK(symcomm_comm_destroy(st.comm));
  tdev_free(st.send);
  tdev_free(st.recv);
  free(st.hsend);
  free(st.hrecv);
  return 0;
}

/* ------------------------------------------------------------ parent */

static pid_t start_rank(int rank, int port) {
  pid_t pid = fork();
  TEST_ASSERT(pid >= 0);
  if (pid != 0)
    return pid;
  test_set_rank_env(rank, NRANKS, port); /* what a user would set by hand */
  me = rank;
  close(job.reports[0]);
  close(job.go[1]);
  close(job.resume[1]);
  exit(rank_main());
}

static void read_report(report_t *r, double deadline) {
  for (;;) {
    ssize_t n = read(job.reports[0], r, sizeof(*r));
    if (n == (ssize_t)sizeof(*r))
      return;
    TEST_ASSERT(n < 0 && errno == EINTR && test_now() < deadline, "a rank stopped reporting");
  }
}

/* How many symcomm memfds processes of this test still hold. */
static int memfds_held(const pid_t *pids, int n) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pids[i]);
    DIR *d = opendir(path);
    if (d == NULL)
      continue; /* gone */
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      char link[512], target[512];
      snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
      ssize_t len = readlink(link, target, sizeof(target) - 1);
      if (len > 0) {
        target[len] = '\0';
        count += strstr(target, "memfd:symcomm") != NULL;
      }
    }
    closedir(d);
  }
  return count;
}

typedef struct outcome {
  report_t failed[NRANKS], refused[NRANKS];
  int have_failed[NRANKS];
  double event_t;
  int event_iteration;
} outcome_t;

static void expect_named(const report_t *r, const char *needle) {
  TEST_ASSERT(test_contains(r->why, needle), "rank %d's sentence does not name %s: %s", r->rank,
              needle, r->why);
}

/* What each rank saw, against what the scenario promises. */
static void check(const char *scenario, const outcome_t *o, int victim, double kill_t) {
  char who[32];
  double worst = 0;
  int first_failed = 1 << 30;
  for (int q = 0; q < NRANKS; q++) {
    const report_t *f = &o->failed[q];
    if (q == victim)
      continue;
    TEST_ASSERT(f->result != SYMCOMM_OK);
    TEST_ASSERT(o->refused[q].result != SYMCOMM_OK && o->refused[q].why[0] != '\0',
                "rank %d's later call was not refused with a sentence", q);
    bool aborter = (strcmp(scenario, "abort") == 0 && q == 1) ||
                   (strcmp(scenario, "abort_thread") == 0 && q == 0);
    TEST_ASSERT(aborter || test_contains(f->why, "rank "), "rank %d's sentence names no rank: %s", q,
                f->why);
    if (q != 2 && f->iteration < first_failed)
      first_failed = f->iteration;
  }
  if (victim >= 0) {
    /* kill -9: everyone else fails within the bound, naming the rank, and
     * the operation when it was waiting in one (a call made after the news
     * is refused naming the rank). */
    const char *op = strcmp(scenario, "kill_p2p") == 0    ? ""
                     : strcmp(scenario, "kill_wait") == 0 ? "a wait for a window's signal"
                                                          : "all-reduce #";
    for (int q = 0; q < NRANKS; q++) {
      if (q == victim)
        continue;
      const report_t *f = &o->failed[q];
      TEST_ASSERT(f->result == SYMCOMM_ERR_REMOTE, "got %s", symcomm_result_string(f->result));
      snprintf(who, sizeof(who), "rank %d exited", victim);
      expect_named(f, who);
      expect_named(&o->refused[q], who);
      if (!test_contains(f->why, "failed earlier")) {
        snprintf(who, sizeof(who), "rank %d exited during ", victim);
        expect_named(f, who);
        expect_named(f, op);
        /* "send #n to rank r" within a host; "send of N bytes to rank r
         * (another host)" between hosts (TEST_HOSTS) */
        if (strcmp(scenario, "kill_p2p") == 0)
          TEST_ASSERT(test_contains(f->why, "send #") || test_contains(f->why, "receive #") ||
                          test_contains(f->why, "(another host)"),
                      "%s", f->why);
      }
      double dt = f->t - kill_t;
      worst = dt > worst ? dt : worst;
      TEST_ASSERT(dt < DETECT_LIMIT_S, "rank %d noticed the kill after %.3f s", q, dt);
    }
    printf("%s: kill -9 of rank %d noticed by every other rank within %.3f s\n", scenario, victim,
           worst);
  } else if (strcmp(scenario, "abort") == 0 || strcmp(scenario, "abort_thread") == 0) {
    int aborter = scenario[5] == '\0' ? 1 : 0;
    double own = -1;
    TEST_ASSERT(o->event_t > 0, "no abort happened");
    snprintf(who, sizeof(who), "rank %d", aborter);
    for (int q = 0; q < NRANKS; q++) {
      const report_t *f = &o->failed[q];
      double dt = f->t - o->event_t;
      if (q == aborter) {
        TEST_ASSERT(f->result == SYMCOMM_ERR_ABORTED, "got %s", symcomm_result_string(f->result));
        TEST_ASSERT(f->iteration == o->event_iteration, "aborted in iteration %d, failed in %d",
                    o->event_iteration, f->iteration);
        /* abort_thread: the wait in progress on the same rank ends at once. */
        TEST_ASSERT(dt < 1.0, "rank %d's own wait ended %.3f s after its abort", q, dt);
        own = dt;
        continue;
      }
      expect_named(f, who);
      expect_named(&o->refused[q], who);
      if (q != 3 || aborter != 0) { /* rank 3 stays away on purpose in abort_thread */
        TEST_ASSERT(dt < DETECT_LIMIT_S, "rank %d noticed the abort after %.3f s", q, dt);
        TEST_ASSERT(f->iteration == o->event_iteration, "rank %d failed in iteration %d, not %d", q,
                    f->iteration, o->event_iteration);
        worst = dt > worst ? dt : worst;
      }
    }
    printf("%s: rank %d's abort noticed by the other ranks within %.3f s (on rank %d itself: "
           "ABORTED %.3f s after the abort)\n",
           scenario, aborter, worst, aborter, own);
  } else if (strncmp(scenario, "sigstop", 7) == 0) {
    /* The stopped rank fails too, at the latest in the all-reduce the
     * others failed first: it never finishes one they reported failed. */
    const report_t *late = &o->failed[2];
    TEST_ASSERT(late->iteration <= first_failed,
                "rank 2 finished all-reduce #%d, which the others reported failed", first_failed);
    printf("%s: the others failed in step #%d; rank 2, resumed, failed in #%d: %s\n", scenario,
           first_failed, late->iteration, late->why);
  }
}

static int run(const char *scenario, int victim) {
  job.scenario = scenario;
  job.victim = victim;
  TEST_ASSERT(pipe(job.reports) == 0 && pipe(job.go) == 0 && pipe(job.resume) == 0);
  if (strncmp(scenario, "sigstop", 7) == 0)
    setenv("SYMCOMM_TIMEOUT", "2", 1);
  else
    unsetenv("SYMCOMM_TIMEOUT"); /* the default, 300 s */
  int port = test_free_port();
  pid_t pids[NRANKS];
  for (int r = 0; r < NRANKS; r++)
    pids[r] = start_rank(r, port);
  close(job.reports[1]);
  close(job.go[0]);
  close(job.resume[0]);
  double deadline = test_now() + 60;

  int ready = 0;
  outcome_t o = {.event_t = -1};
  int failed = 0, refused = 0;
  int want_failed = NRANKS - (victim >= 0);
  int stopped = strncmp(scenario, "sigstop", 7) == 0 ? 2 : -1;
  double kill_t = -1;
  bool on_host = true; /* the simulated backend: device memory is memfd memory */
  report_t r;
  /* An aborting thread reports its abort once the call returned, which may
   * be after every rank's failure: wait for that report too. */
  bool aborts = strcmp(scenario, "abort") == 0 || strcmp(scenario, "abort_thread") == 0;
  while (failed < want_failed || refused < want_failed || (aborts && o.event_t < 0)) {
    read_report(&r, deadline);
    if (r.kind == REPORT_READY)
      on_host = on_host && strcmp(r.why, "host") == 0;
    if (r.kind == REPORT_READY && ++ready == NRANKS) {
      /* The job's device memory is there now; the end must leave none. */
      TEST_ASSERT(!on_host || memfds_held(pids, NRANKS) > 0, "the ranks hold no symcomm memfd");
      usleep((useconds_t)(rand() % 300) * 1000); /* somewhere in the loop */
      if (victim >= 0) {
        kill_t = test_now();
        TEST_ASSERT(kill(pids[victim], SIGKILL) == 0);
      } else if (stopped >= 0) {
        TEST_ASSERT(kill(pids[stopped], SIGSTOP) == 0);
      }
    } else if (r.kind == REPORT_EVENT) {
      o.event_t = r.t;
      o.event_iteration = r.iteration;
    } else if (r.kind == REPORT_FAILED) {
      o.failed[r.rank] = r;
      o.have_failed[r.rank] = 1;
      failed++;
      printf("rank %d: %s after iteration %d: %s\n", r.rank, symcomm_result_string(r.result),
             r.iteration, r.why);
      /* The others have all failed: let the rank that stayed away go on. */
      bool one_late = stopped >= 0 || strcmp(scenario, "abort_thread") == 0;
      if (failed == NRANKS - 1 && one_late) {
        int late = stopped >= 0 ? stopped : 3;
        for (int q = 0; q < NRANKS; q++)
          TEST_ASSERT(q == late || o.have_failed[q], "rank %d failed before the others", late);
        if (stopped >= 0)
          TEST_ASSERT(kill(pids[stopped], SIGCONT) == 0);
        else
          TEST_ASSERT(write(job.resume[1], "r", 1) == 1);
      }
    } else if (r.kind == REPORT_REFUSED) {
      o.refused[r.rank] = r;
      refused++;
    }
  }
  /* Everyone may leave now: one write for all, since written a byte at a
   * time the last could find every survivor gone (the victim is dead) and
   * end this process with SIGPIPE (exit 141, seen once in CI). */
  char gos[NRANKS];
  memset(gos, 'g', sizeof(gos));
  TEST_ASSERT(write(job.go[1], gos, sizeof(gos)) == (ssize_t)sizeof(gos));
  test_reap_ranks(pids, NRANKS, victim);
  for (int q = 0; q < NRANKS; q++)
    TEST_ASSERT(kill(pids[q], 0) != 0 && errno == ESRCH, "rank %d's process is still there", q);
  TEST_ASSERT(memfds_held(pids, NRANKS) == 0);
  close(job.reports[0]);
  close(job.go[1]);
  close(job.resume[1]);
  check(scenario, &o, victim, kill_t);
  return 0;
}
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: test_rank_faults kill_coll V|kill_p2p V|kill_wait V|abort|abort_thread|sigstop|"
            "sigstop_p2p\n");
    return 2;
  }
  srand((unsigned)getpid());
  int victim = argc > 2 ? atoi(argv[2]) : -1;
  const char *n = getenv("TEST_COUNT");
  if (n != NULL)
    elems = atoi(n);
  TEST_ASSERT(elems > 0, "TEST_COUNT=%s", n);
  return run(argv[1], victim);
}
