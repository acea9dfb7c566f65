/* The network engine (src/transport/net/) between processes on loopback,
 * without communicators: a parent forks the ranks, passes each one every
 * rank's address through pipes, and watches (or kills, or stops) them.
 *   test_net_engine sizes N       0, 1, 4095, 1 MiB - 1, 1 MiB, 1 MiB + 1, 64 MiB + 3
 *                                 between N ranks, every pair both ways, one size at a time
 *   test_net_engine peers N       many sizes to and from every peer, all posted at once
 *   test_net_engine many          1000 small messages back to back each way (finish in order)
 *   test_net_engine staging       chunk_ptr says "not yet" for a while on both sides (a staging
 *                                 ring of 3 chunks, copies that take time), sent memory poisoned
 *                                 as soon as chunk_done says it left; then one way, one message
 *                                 at a time (a staging copy that only the poller's hint ends)
 *   test_net_engine mismatch [SEND RECV]   1000 (SEND) bytes sent, 2000 (RECV) received: both
 *                                 fail naming both sizes
 *   test_net_engine stray         strangers connect to 2 exchanging ranks during transfers (garbage,
 *                                 a wrong token, half a hello, a duplicate socket): the job goes on
 *   test_net_engine kill9 WHO     kill -9 of the sender or receiver (WHO) of a large transfer: the
 *                                 other fails in < 2 s with a sentence naming it
 *   test_net_engine sigstop WHO   SIGSTOP of one: the other fails after its 2 s timeout
 *   test_net_engine fault_seq     the sender stamps a wrong message number on a chunk
 *                                 (SYMCOMM_NET_FAULT=seq): the receiver fails, writes nothing of it
 *   test_net_engine eager N [W0]  messages that go without a grant, between N ranks (rank 0's
 *                                 window W0, the others' SYMCOMM_NET_WINDOW): sizes
 *                                 around SYMCOMM_NET_EAGER_BYTES (E - 1, E, E + 1, 0, 1) all at
 *                                 once both ways, staged too; then each rank sends 3 windows of
 *                                 small messages to the next before the receives are posted (the
 *                                 receiver holds at most a window of them), finishing in order
 *   test_net_engine eager_bad     rank 1, played by raw sockets, breaks the rules of EAGER
 *                                 records (wrong number, 0 or too many bytes, more than the
 *                                 receive, for a granted receive, beyond the window, cut short, a
 *                                 SIZE in place of EAGER, another limit): rank 0 fails with a
 *                                 sentence, writes nothing, frees what it held
 *   test_net_engine dup_header    rank 1, played by raw sockets that know the token, sends a
 *                                 granted chunk, then in the same write a second header for it
 *                                 numbered as a claimed slot is marked: the receiver fails, the
 *                                 second payload lands nowhere
 *   test_net_engine bench BYTES SOCKETS ITERS   loopback bandwidth (not a test)
 * Data depends on sender, receiver, message and byte index; receive buffers
 * start as a sentinel with guard bytes around them. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_data.h"
#include "test_util.h"
#include "transport/net/net_engine.h"
#include "transport/net/net_wire.h"
#include "util/clock.h"
#include "util/socket.h"

#define MAX_RANKS 8
#define COMM_ID 0x5eed0000c0ffee01ull
#define TOKEN 0x70cc3e9a11b2c4d5ull
#define KIB 1024u
#define MIB (1024u * 1024u)

/* ---- one rank (a child process) */

typedef struct note { /* child -> parent */
  int kind;
  int64_t t_ms;
  char text[480];
} note_t;
enum { NOTE_STARTED = 1, NOTE_FAILED = 2 };

static struct {
  int rank, nranks;
  int up, down; /* pipes to and from the parent */
  sc_net_config_t cfg;
  sc_net_endpoint_t *ep;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int fails;
  sc_result_t fail_res;
  char fail_text[512];
  int64_t fail_ms;
} me = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void note(int kind, const char *text) {
  note_t n = {.kind = kind, .t_ms = sc_now_ms()};
  snprintf(n.text, sizeof(n.text), "%s", text ? text : "");
  TEST_ASSERT(write(me.up, &n, sizeof(n)) == (ssize_t)sizeof(n));
}

static void on_fail(void *ctx, sc_result_t res, const char *sentence) {
  (void)ctx;
  pthread_mutex_lock(&me.lock);
  me.fails++;
  me.fail_res = res;
  me.fail_ms = sc_now_ms();
  snprintf(me.fail_text, sizeof(me.fail_text), "%s", sentence);
  pthread_mutex_unlock(&me.lock);
  printf("rank %d: fail(%s): %s\n", me.rank, symcomm_result_string(res), sentence);
  fflush(stdout);
}

/* A message with its buffer. Staged messages go through a ring of chunk
 * slots whose copies take time, as GPU data through pinned memory would. */
#define STAGE_SLOTS 3
typedef struct tmsg {
  sc_net_msg_t m;
  td_buf_t buf;
  uint64_t seed;
  int from; /* the sender's rank */
  bool staged;
  uint8_t *slots[STAGE_SLOTS];
  int64_t slot_chunk[STAGE_SLOTS]; /* chunk a slot holds, -1: free */
  int64_t slot_ready_us[STAGE_SLOTS]; /* send: staging copy done; recv: copy-out done (after landing) */
  bool slot_landed[STAGE_SLOTS]; /* recv: the chunk landed; send: the poller saw its copy done */
  int nulls; /* times chunk_ptr said "not yet" */
  uint64_t chunks_done;
  bool finished;
  sc_result_t res;
  bool fail_before; /* cfg.fail had been called when a failure finished it */
  int order;        /* its place among the finished messages of its queue */
  struct tmsg *next_active;
} tmsg_t;

static tmsg_t *active; /* staged messages, for the poller (progress thread only) */
static int exchanging; /* ranks 0 .. exchanging - 1 take part in exchange() */
static int finished_count[2][MAX_RANKS];

static uint64_t msg_seed(int from, int to, int index) { return td_mix(0x6e6574ull, from * 64 + to, (uint64_t)index); }

static size_t chunk_len(const tmsg_t *t, uint64_t k) {
  size_t cb = me.cfg.chunk_bytes;
  uint64_t off = k * cb;
  return t->m.bytes - off < cb ? (size_t)(t->m.bytes - off) : cb;
}

/* TEST_NET_STAGE_US: every staging copy takes this long instead (0: done
 * when it starts, so it is always done by the time the engine's turn ends
 * and its poller looks). */
static uint64_t stage_delay_us(uint64_t k) {
  const char *fixed = getenv("TEST_NET_STAGE_US");
  if (fixed != NULL)
    return strtoull(fixed, NULL, 10);
  return 200 + td_mix(7, me.rank, k) % 1500;
}

static void *chunk_ptr(sc_net_msg_t *m, uint64_t k) {
  tmsg_t *t = (tmsg_t *)m;
  TEST_ASSERT(k * me.cfg.chunk_bytes < m->bytes, "chunk %llu of %llu bytes asked", (unsigned long long)k,
              (unsigned long long)m->bytes);
  if (!t->staged)
    return t->buf.data + k * me.cfg.chunk_bytes;
  int s = (int)(k % STAGE_SLOTS);
  int64_t now = sc_now_us();
  if (t->slot_chunk[s] != (int64_t)k) {
    if (t->slot_chunk[s] != -1) { /* still holds an earlier chunk */
      t->nulls++;
      return NULL;
    }
    t->slot_chunk[s] = (int64_t)k;
    t->slot_landed[s] = false;
    if (m->kind == SC_NET_SEND) { /* the staging copy starts now and takes a while */
      t->slot_ready_us[s] = now + (int64_t)stage_delay_us(k);
      t->nulls++;
      return NULL;
    }
    memset(t->slots[s], TD_SENTINEL, me.cfg.chunk_bytes);
    return t->slots[s];
  }
  if (m->kind == SC_NET_SEND) {
    if (now < t->slot_ready_us[s]) {
      t->nulls++;
      return NULL;
    }
    memcpy(t->slots[s], t->buf.data + k * me.cfg.chunk_bytes, chunk_len(t, k));
  }
  return t->slots[s];
}

static void chunk_done(sc_net_msg_t *m, uint64_t k) {
  tmsg_t *t = (tmsg_t *)m;
  t->chunks_done++;
  if (!t->staged)
    return;
  int s = (int)(k % STAGE_SLOTS);
  TEST_ASSERT(t->slot_chunk[s] == (int64_t)k, "chunk_done(%llu) for a chunk the slot does not hold",
              (unsigned long long)k);
  if (m->kind == SC_NET_SEND) {
    /* Its bytes left: the memory is ours again, and whatever we write now must not reach the peer. */
    memset(t->slots[s], 0xee, me.cfg.chunk_bytes);
    t->slot_chunk[s] = -1;
  } else {
    t->slot_landed[s] = true;
    t->slot_ready_us[s] = sc_now_us() + (int64_t)stage_delay_us(k);
  }
}

static void finish(sc_net_msg_t *m, sc_result_t res) {
  tmsg_t *t = (tmsg_t *)m;
  pthread_mutex_lock(&me.lock);
  TEST_ASSERT(!t->finished, "finish() called twice");
  t->res = res;
  t->fail_before = me.fails > 0;
  t->order = finished_count[m->kind][m->peer]++;
  t->finished = true;
  pthread_cond_broadcast(&me.cond);
  pthread_mutex_unlock(&me.lock);
}

/* Staged receives copy landed slots out once their copy "finished"; returns when to look again. */
static int64_t stage_poller(void *ctx) {
  (void)ctx;
  int64_t now = sc_now_us(), next = -1;
  pthread_mutex_lock(&me.lock); /* the main thread unlinks the list under it before freeing */
  for (tmsg_t *t = active; t != NULL; t = t->next_active) {
    for (int s = 0; s < STAGE_SLOTS; s++) {
      if (t->slot_chunk[s] < 0)
        continue;
      bool waiting = t->m.kind == SC_NET_SEND ? true : t->slot_landed[s];
      if (!waiting)
        continue;
      if (t->slot_ready_us[s] > now) {
        int64_t d = t->slot_ready_us[s] - now;
        next = next < 0 || d < next ? d : next;
        continue;
      }
      /* A send's copy is done: one more turn of the engine, which sleeps
       * till the pollers' hint and takes the chunk when it asks again (the
       * copy may have finished before this look, with no hint left: as
       * net_staging.c wakes the engine). */
      if (t->m.kind == SC_NET_SEND && !t->slot_landed[s]) {
        t->slot_landed[s] = true;
        next = 0;
      }
      if (t->m.kind == SC_NET_RECV) {
        uint64_t k = (uint64_t)t->slot_chunk[s];
        memcpy(t->buf.data + k * me.cfg.chunk_bytes, t->slots[s], chunk_len(t, k));
        memset(t->slots[s], 0xdd, me.cfg.chunk_bytes);
        __atomic_store_n(&t->slot_chunk[s], -1, __ATOMIC_RELEASE);
        next = 0;
      }
    }
  }
  pthread_mutex_unlock(&me.lock);
  return next;
}

static tmsg_t *tmsg_new(int kind, int peer, uint64_t bytes, int index, bool staged) {
  tmsg_t *t = calloc(1, sizeof(*t));
  TEST_ASSERT(t != NULL);
  t->m = (sc_net_msg_t){.peer = peer, .kind = kind, .bytes = bytes, .chunk_ptr = chunk_ptr,
                        .chunk_done = chunk_done, .finish = finish, .user = t};
  t->from = kind == SC_NET_SEND ? me.rank : peer;
  int to = kind == SC_NET_SEND ? peer : me.rank;
  t->seed = msg_seed(t->from, to, index);
  t->buf = td_buf_alloc((size_t)bytes, (size_t)index * 3);
  if (kind == SC_NET_SEND)
    td_fill(t->buf.data, (size_t)bytes, t->seed, t->from);
  t->staged = staged;
  if (staged) {
    for (int s = 0; s < STAGE_SLOTS; s++) {
      t->slots[s] = malloc(me.cfg.chunk_bytes);
      TEST_ASSERT(t->slots[s] != NULL);
      t->slot_chunk[s] = -1;
    }
  }
  return t;
}

static void tmsg_free(tmsg_t *t) {
  td_buf_free(&t->buf);
  for (int s = 0; s < STAGE_SLOTS; s++)
    free(t->slots[s]);
  free(t);
}

static void post(tmsg_t *t) { TEST_OK(sc_net_post(me.ep, &t->m)); }

/* Waits until every message finished (fails the test after timeout_s). */
static void wait_all(tmsg_t **ts, int n, double timeout_s) {
  double end = test_now() + timeout_s;
  pthread_mutex_lock(&me.lock);
  for (int i = 0; i < n; i++)
    while (!ts[i]->finished) {
      TEST_ASSERT(test_now() < end, "rank %d: message %d (%s %llu bytes, peer %d) did not finish in %.0f s",
                  me.rank, i, ts[i]->m.kind == SC_NET_SEND ? "send" : "receive",
                  (unsigned long long)ts[i]->m.bytes, ts[i]->m.peer, timeout_s);
      struct timespec ts_abs;
      clock_gettime(CLOCK_REALTIME, &ts_abs);
      ts_abs.tv_nsec += 50 * 1000000;
      if (ts_abs.tv_nsec >= 1000000000) {
        ts_abs.tv_sec++;
        ts_abs.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&me.cond, &me.lock, &ts_abs);
    }
  pthread_mutex_unlock(&me.lock);
}

static void check_received(tmsg_t *t) {
  char what[96];
  snprintf(what, sizeof(what), "rank %d: %llu bytes from rank %d", me.rank, (unsigned long long)t->m.bytes,
           t->m.peer);
  TEST_ASSERT(t->res == SYMCOMM_OK, "%s: %s", what, symcomm_result_string(t->res));
  td_check(t->buf.data, t->buf.bytes, t->seed, t->from, what);
  td_check_guards(t->buf.data, t->buf.bytes, what);
}

/* Staged messages the poller serves (until active is emptied). */
static void stage_track(tmsg_t **ts, int n) {
  pthread_mutex_lock(&me.lock); /* the poller reads the list on the progress thread */
  for (int i = 0; i < n; i++) {
    ts[i]->next_active = active;
    active = ts[i];
  }
  pthread_mutex_unlock(&me.lock);
}

/* finish() says the chunks landed; our own copies out of the staging slots may still run. */
static void stage_settle(tmsg_t **ts, int n) {
  for (int i = 0; i < n; i++)
    for (int s = 0; s < STAGE_SLOTS && ts[i]->m.kind == SC_NET_RECV && ts[i]->res == SYMCOMM_OK; s++)
      while (__atomic_load_n(&ts[i]->slot_chunk[s], __ATOMIC_ACQUIRE) != -1)
        usleep(1000);
}

/* Posts a send to and a receive from every other rank for each size (index
 * base + i), all at once; waits; checks every byte. */
static void exchange(const uint64_t *sizes, int nsizes, int base, bool staged, double timeout_s) {
  int np = exchanging;
  int n = 2 * nsizes * (np - 1), k = 0;
  tmsg_t **ts = calloc((size_t)n, sizeof(*ts));
  TEST_ASSERT(ts != NULL);
  for (int i = 0; i < nsizes; i++)
    for (int d = 1; d < np; d++) {
      int to = (me.rank + d) % np, from = (me.rank - d + np) % np;
      ts[k++] = tmsg_new(SC_NET_RECV, from, sizes[i], base + i, staged);
      ts[k++] = tmsg_new(SC_NET_SEND, to, sizes[i], base + i, staged);
    }
  if (staged)
    stage_track(ts, n);
  for (int i = 0; i < n; i++)
    post(ts[i]);
  wait_all(ts, n, timeout_s);
  if (staged)
    stage_settle(ts, n);
  int nulls = 0;
  for (int i = 0; i < n; i++) {
    TEST_ASSERT(ts[i]->res == SYMCOMM_OK, "rank %d: message to/from %d: %s", me.rank, ts[i]->m.peer,
                symcomm_result_string(ts[i]->res));
    TEST_ASSERT(ts[i]->chunks_done == (ts[i]->m.bytes + me.cfg.chunk_bytes - 1) / me.cfg.chunk_bytes,
                "chunk_done called %llu times for %llu bytes", (unsigned long long)ts[i]->chunks_done,
                (unsigned long long)ts[i]->m.bytes);
    if (ts[i]->m.kind == SC_NET_RECV)
      check_received(ts[i]);
    nulls += ts[i]->nulls;
  }
  if (staged) {
    TEST_ASSERT(nulls > 0, "staging never said 'not yet'");
    printf("rank %d: chunk_ptr said 'not yet' %d times\n", me.rank, nulls);
  }
  pthread_mutex_lock(&me.lock);
  active = NULL;
  pthread_mutex_unlock(&me.lock);
  for (int i = 0; i < n; i++)
    tmsg_free(ts[i]);
  free(ts);
}

/* ---- scenarios, as run by each rank */

static const char *g_mode;
static char **g_argv;

static const uint64_t edge_sizes[] = {0, 1, 4095, 1 * MIB - 1, 1 * MIB, 1 * MIB + 1, 64 * MIB + 3}; /* around the default chunk */

static void rank_sizes(void) {
  for (int i = 0; i < (int)(sizeof(edge_sizes) / sizeof(edge_sizes[0])); i++)
    exchange(&edge_sizes[i], 1, i, false, 60);
  printf("rank %d: every size to and from %d peers checked\n", me.rank, me.nranks - 1);
}

static void rank_peers(void) {
  static const uint64_t sizes[] = {0, 1, 4095, 512 * KIB + 1, 3 * MIB + 5, 8 * MIB + 3, 100};
  for (int round = 0; round < 2; round++)
    exchange(sizes, 7, round * 10, false, 60);
  printf("rank %d: 7 sizes x %d peers both ways at once, twice\n", me.rank, me.nranks - 1);
}

static void rank_many(void) {
  enum { N = 1000 };
  tmsg_t **ts = calloc(2 * N, sizeof(*ts));
  int peer = 1 - me.rank;
  for (int i = 0; i < N; i++) {
    uint64_t bytes = (uint64_t)(i * 37) % 301;
    ts[2 * i] = tmsg_new(SC_NET_RECV, peer, bytes, i, false);
    ts[2 * i + 1] = tmsg_new(SC_NET_SEND, peer, bytes, i, false);
  }
  for (int i = 0; i < 2 * N; i++)
    post(ts[i]);
  wait_all(ts, 2 * N, 60);
  for (int i = 0; i < 2 * N; i++) {
    TEST_ASSERT(ts[i]->order == i / 2, "message %d of its queue finished as #%d", i / 2, ts[i]->order);
    if (ts[i]->m.kind == SC_NET_RECV)
      check_received(ts[i]);
    else
      TEST_ASSERT(ts[i]->res == SYMCOMM_OK);
    tmsg_free(ts[i]);
  }
  free(ts);
  printf("rank %d: 1000 small messages each way, in order\n", me.rank);

  /* The progress thread sleeps while nothing moves: rank 0 waits 0.5 s for a
   * message rank 1 sends late; neither may burn the CPU meanwhile. */
  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  tmsg_t *late = tmsg_new(me.rank == 0 ? SC_NET_RECV : SC_NET_SEND, peer, 5000, N, false);
  if (me.rank == 1)
    usleep(500 * 1000);
  post(late);
  wait_all(&late, 1, 30);
  if (me.rank == 0)
    check_received(late);
  tmsg_free(late);
  getrusage(RUSAGE_SELF, &r1);
  double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
               (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
  printf("rank %d: %.3f s of CPU while a message waited 0.5 s\n", me.rank, cpu);
  TEST_ASSERT(cpu < 0.1, "rank %d used %.3f s of CPU in 0.5 s of waiting: a busy loop", me.rank, cpu);
}

static void rank_staging(void) {
  static const uint64_t sizes[] = {1 * MIB + 7, 4 * MIB + 1, 64 * KIB, 3};
  TEST_OK(sc_net_endpoint_add_poller(me.ep, stage_poller, NULL));
  /* Well under the 30 s timeout: a "not yet" no poller hint covers would wait for a deadline. */
  exchange(sizes, 4, 0, true, 20);
  /* One way, one message at a time, each send posted after its receive's
   * size and grant came: the turn that starts the send's staging copy is
   * followed by nothing from the network, so only a poller hint taken after
   * that turn's chunk_ptr calls wakes the thread before the 30 s deadline. */
  static const uint64_t one_way[] = {3, 64 * KIB + 5, 64 * KIB};
  for (int i = 0; i < 3; i++) {
    tmsg_t *t = tmsg_new(me.rank == 0 ? SC_NET_RECV : SC_NET_SEND, 1 - me.rank, one_way[i], 20 + i, true);
    stage_track(&t, 1);
    if (me.rank == 1)
      usleep(50 * 1000);
    post(t);
    wait_all(&t, 1, 5);
    stage_settle(&t, 1);
    if (me.rank == 0)
      check_received(t);
    TEST_ASSERT(t->res == SYMCOMM_OK, "rank %d: one-way message %d: %s", me.rank, i, symcomm_result_string(t->res));
    pthread_mutex_lock(&me.lock);
    active = NULL;
    pthread_mutex_unlock(&me.lock);
    tmsg_free(t);
  }
  printf("rank %d: staged both sides, and one way one at a time\n", me.rank);
}

static void rank_eager(void) {
  uint64_t e = me.cfg.eager_bytes;
  TEST_ASSERT(e >= 2, "SYMCOMM_NET_EAGER_BYTES=%llu: the test needs 2 or more", (unsigned long long)e);
  const uint64_t sizes[] = {e - 1, e, e + 1, 0, 1, e / 2 + 1};
  exchange(sizes, 6, 0, false, 60);
  TEST_OK(sc_net_endpoint_add_poller(me.ep, stage_poller, NULL));
  exchange(sizes, 6, 10, true, 60);
  /* Sends run ahead of the receives: 3 windows of them, to the next rank,
   * while the previous rank's reach this one before it posts its receives. */
  sc_net_config_t env = {0}; /* the others' window, where rank 0's differs */
  TEST_OK(sc_net_config_from_env(&env));
  int w = g_argv[3] != NULL && atoi(g_argv[3]) > env.window ? atoi(g_argv[3]) : env.window;
  int n = 3 * w, to = (me.rank + 1) % me.nranks, from = (me.rank + me.nranks - 1) % me.nranks;
  int order0 = finished_count[SC_NET_RECV][from];
  tmsg_t **ts = calloc(2 * (size_t)n, sizeof(*ts));
  TEST_ASSERT(ts != NULL);
  for (int i = 0; i < n; i++) {
    uint64_t bytes = i % 7 == 3 ? e : 1 + td_mix(11, i, 0) % e;
    ts[i] = tmsg_new(SC_NET_SEND, to, bytes, 100 + i, false);
    post(ts[i]);
  }
  usleep(200 * 1000);
  for (int i = 0; i < n; i++) {
    uint64_t bytes = i % 7 == 3 ? e : 1 + td_mix(11, i, 0) % e;
    ts[n + i] = tmsg_new(SC_NET_RECV, from, bytes, 100 + i, false);
    post(ts[n + i]);
  }
  wait_all(ts, 2 * n, 60);
  for (int i = 0; i < n; i++) {
    TEST_ASSERT(ts[i]->res == SYMCOMM_OK, "send %d: %s", i, symcomm_result_string(ts[i]->res));
    TEST_ASSERT(ts[n + i]->order == order0 + i, "receive %d finished as #%d", i, ts[n + i]->order - order0);
    check_received(ts[n + i]);
  }
  for (int i = 0; i < 2 * n; i++)
    tmsg_free(ts[i]);
  free(ts);
  printf("rank %d: eager sizes around %llu both ways, staged too, and %d sent ahead of their receives\n", me.rank,
         (unsigned long long)e, n);
}

static void expect_failed(tmsg_t *t, sc_result_t res, const char *what) {
  TEST_ASSERT(t->res == res, "rank %d: %s finished with %s, expected %s", me.rank, what,
              symcomm_result_string(t->res), symcomm_result_string(res));
  TEST_ASSERT(t->fail_before, "rank %d: %s finished with a failure before fail() was called", me.rank, what);
}

static void expect_fail_sentence(sc_result_t res, const char *a, const char *b) {
  pthread_mutex_lock(&me.lock);
  TEST_ASSERT(me.fails == 1, "fail() called %d times", me.fails);
  TEST_ASSERT(me.fail_res == res, "fail(%s), expected %s", symcomm_result_string(me.fail_res),
              symcomm_result_string(res));
  TEST_ASSERT(test_contains(me.fail_text, a) && (b == NULL || test_contains(me.fail_text, b)),
              "sentence '%s' lacks '%s' or '%s'", me.fail_text, a, b ? b : "");
  pthread_mutex_unlock(&me.lock);
}

static void rank_mismatch(uint64_t send_bytes, uint64_t recv_bytes) {
  int peer = 1 - me.rank;
  tmsg_t *t = tmsg_new(me.rank == 0 ? SC_NET_SEND : SC_NET_RECV, peer, me.rank == 0 ? send_bytes : recv_bytes, 0,
                       false);
  post(t);
  wait_all(&t, 1, 30);
  expect_failed(t, SYMCOMM_ERR_INVALID_USAGE, "the mismatched message");
  char sizes[2][48];
  snprintf(sizes[0], sizeof(sizes[0]), "sends %llu bytes", (unsigned long long)send_bytes);
  snprintf(sizes[1], sizeof(sizes[1]), "receives %llu bytes", (unsigned long long)recv_bytes);
  expect_fail_sentence(SYMCOMM_ERR_INVALID_USAGE, sizes[0], sizes[1]);
  char rank_text[32];
  snprintf(rank_text, sizeof(rank_text), "rank %d", peer);
  expect_fail_sentence(SYMCOMM_ERR_INVALID_USAGE, rank_text, me.rank == 0 ? "send #0" : "receive #0");
  if (me.rank == 1)
    td_check_untouched(t->buf.data, t->buf.bytes, "the receive of a mismatched size");
  td_check_guards(t->buf.data, t->buf.bytes, "mismatch");
  /* Later posts are refused with the failure. */
  tmsg_t *later = tmsg_new(SC_NET_SEND, peer, 10, 1, false);
  TEST_EXPECT_RESULT(sc_net_post(me.ep, &later->m), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(!later->finished);
  tmsg_free(later);
  tmsg_free(t);
  printf("rank %d: mismatch failed as it should: %s\n", me.rank, me.fail_text);
}

/* Ranks 0 and 1 exchange round after round until the parent, done with its
 * strangers, closes their pipes; rank 2 is idle (its connections to them
 * never open: a stranger may claim them) until then too. */
static void rank_stray(void) {
  static const uint64_t sizes[] = {2 * MIB + 1, 64 * KIB, 17};
  enum { MAX_ROUNDS = 5000 };
  exchanging = 2;
  if (me.rank == 2) {
    note(NOTE_STARTED, NULL);
    char c;
    TEST_ASSERT(read(me.down, &c, 1) == 0);
    return;
  }
  exchange(sizes, 3, 0, false, 60); /* connected both ways */
  note(NOTE_STARTED, NULL);
  int round = 1;
  for (bool more = true; more; round++) {
    TEST_ASSERT(round < MAX_ROUNDS, "the parent never said stop");
    exchange(sizes, 3, round * 10, false, 60);
    /* Rank 0 alone reads the parent's word, and tells rank 1: both do as many rounds. */
    tmsg_t *go = tmsg_new(me.rank == 0 ? SC_NET_SEND : SC_NET_RECV, 1 - me.rank, 1, round * 10 + 9, false);
    if (me.rank == 0) {
      struct pollfd pd = {.fd = me.down, .events = POLLIN};
      go->buf.data[0] = poll(&pd, 1, 0) == 0;
    }
    post(go);
    wait_all(&go, 1, 60);
    TEST_ASSERT(go->res == SYMCOMM_OK);
    more = go->buf.data[0] == 1;
    TEST_ASSERT(more || go->buf.data[0] == 0, "the word of rank 0 is %d", go->buf.data[0]);
    tmsg_free(go);
  }
  pthread_mutex_lock(&me.lock);
  TEST_ASSERT(me.fails == 0, "the endpoint failed: %s", me.fail_text);
  pthread_mutex_unlock(&me.lock);
  printf("rank %d: %d rounds unaffected by strangers\n", me.rank, round);
}

/* kill9 / sigstop: the sender streams 64 MiB messages; the receiver takes
 * them until the parent stops or kills one of the two. */
static void rank_stream(void) {
  enum { ROUNDS = 2000 };
  int peer = 1 - me.rank;
  int kind = me.rank == 1 ? SC_NET_SEND : SC_NET_RECV;
  tmsg_t *t = NULL;
  for (int i = 0; i < ROUNDS; i++) {
    t = tmsg_new(kind, peer, 64 * MIB, i, false);
    post(t);
    wait_all(&t, 1, 60);
    if (t->res != SYMCOMM_OK)
      break;
    if (kind == SC_NET_RECV)
      check_received(t);
    if (i == 0 && me.rank == 0)
      note(NOTE_STARTED, NULL);
    tmsg_free(t);
    t = NULL;
  }
  TEST_ASSERT(t != NULL, "rank %d: all %d rounds finished; nobody was stopped", me.rank, ROUNDS);
  expect_failed(t, me.fail_res, "the transfer");
  td_check_guards(t->buf.data, t->buf.bytes, "the interrupted transfer");
  pthread_mutex_lock(&me.lock);
  note_t n = {.kind = NOTE_FAILED, .t_ms = me.fail_ms};
  snprintf(n.text, sizeof(n.text), "%s: %s", symcomm_result_string(me.fail_res), me.fail_text);
  pthread_mutex_unlock(&me.lock);
  TEST_ASSERT(write(me.up, &n, sizeof(n)) == (ssize_t)sizeof(n));
  tmsg_free(t);
}

static void rank_fault_seq(void) {
  int peer = 1 - me.rank;
  size_t cb = me.cfg.chunk_bytes;
  if (me.rank == 1) {
    tmsg_t *t = tmsg_new(SC_NET_SEND, peer, 8 * cb, 0, false);
    post(t);
    wait_all(&t, 1, 30);
    /* Its chunks may all have left before rank 0 failed; what follows sees rank 0 close. */
    tmsg_t *r = tmsg_new(SC_NET_RECV, peer, 1, 0, false);
    if (sc_net_post(me.ep, &r->m) == SYMCOMM_OK)
      wait_all(&r, 1, 10);
    expect_fail_sentence(SYMCOMM_ERR_REMOTE, "rank 0", "closed");
    td_check_untouched(r->buf.data, 1, "a receive from the failed rank");
    tmsg_free(r);
    tmsg_free(t);
    return;
  }
  tmsg_t *t = tmsg_new(SC_NET_RECV, peer, 8 * cb, 0, false);
  post(t);
  wait_all(&t, 1, 30);
  expect_failed(t, SYMCOMM_ERR_REMOTE, "the receive");
  expect_fail_sentence(SYMCOMM_ERR_REMOTE, "message #1 chunk 2", "nothing of it was written");
  expect_fail_sentence(SYMCOMM_ERR_REMOTE, "receive #0 of", "from rank 1");
  /* The chunk with the wrong number wrote nothing; every other byte is the sender's or untouched. */
  td_check_untouched(t->buf.data + 2 * cb, cb, "the chunk with a wrong message number");
  size_t landed = 0;
  for (int k = 0; k < 8; k++) {
    if (k == 2)
      continue;
    const uint8_t *c = t->buf.data + (size_t)k * cb;
    size_t wrong = td_count_wrong(t->buf.data, (size_t)(k + 1) * cb, t->seed, t->from) -
                   td_count_wrong(t->buf.data, (size_t)k * cb, t->seed, t->from);
    size_t untouched = 0;
    for (size_t i = 0; i < cb; i++)
      untouched += c[i] == TD_SENTINEL;
    TEST_ASSERT(wrong <= untouched, "chunk %d: %zu bytes neither the sender's nor untouched", k, wrong - untouched);
    landed += cb - untouched;
  }
  td_check_guards(t->buf.data, t->buf.bytes, "fault_seq");
  printf("rank 0: failed as it should (%zu bytes of other chunks landed): %s\n", landed, me.fail_text);
  tmsg_free(t);
}

static void rank_bench(uint64_t bytes, int iters) {
  int peer = 1 - me.rank;
  int kind = me.rank == 1 ? SC_NET_SEND : SC_NET_RECV;
  tmsg_t *t = tmsg_new(kind, peer, bytes, 0, false);
  double best = 0, t0 = 0;
  for (int i = 0; i < iters + 1; i++) {
    t->finished = false;
    t->chunks_done = 0;
    memset(&t->m.engine, 0, sizeof(t->m.engine));
    t0 = test_now();
    post(t);
    wait_all(&t, 1, 120);
    TEST_ASSERT(t->res == SYMCOMM_OK);
    double gbs = (double)bytes / (test_now() - t0) / 1e9;
    if (i > 0 && gbs > best)
      best = gbs;
  }
  if (kind == SC_NET_RECV) {
    check_received(t);
    printf("bench: %llu bytes, %d sockets, chunk %zu, window %d: best of %d %.2f GB/s\n",
           (unsigned long long)bytes, me.cfg.sockets, me.cfg.chunk_bytes, me.cfg.window, iters, best);
  }
  tmsg_free(t);
}

/* ---- the job: fork, pass addresses, run, reap */

typedef struct job {
  int n;
  pid_t pids[MAX_RANKS];
  int up[MAX_RANKS], down[MAX_RANKS];
  sc_net_addr_t addrs[MAX_RANKS];
} job_t;

static sc_net_addr_t g_addrs[MAX_RANKS];

static int dup_connect(const sc_net_hello_t *h) {
  char text[96];
  sc_net_default_ops()->addr_text(&g_addrs[0], text, sizeof(text));
  sc_sockaddr_t sa;
  TEST_OK(sc_sockaddr_parse(text, -1, &sa));
  int fd;
  TEST_OK(sc_socket_connect(&sa, sc_deadline_after(5000), -1, &fd));
  TEST_OK(sc_socket_send_all(fd, h, sizeof(*h), sc_deadline_after(5000), -1, "rank 0"));
  return fd;
}

/* A claimed slot is marked with message number UINT64_MAX until the progress
 * thread settles its landing: a header with that number must not claim it again. */
static void rank_dup_header(void) {
  size_t cb = me.cfg.chunk_bytes;
  if (me.rank == 0) {
    tmsg_t *t = tmsg_new(SC_NET_RECV, 1, cb, 0, false);
    post(t);
    wait_all(&t, 1, 30);
    expect_failed(t, SYMCOMM_ERR_REMOTE, "the receive");
    expect_fail_sentence(SYMCOMM_ERR_REMOTE, "chunk 0", "did not grant");
    size_t wrong = td_count_wrong(t->buf.data, cb, t->seed, t->from), untouched = 0;
    for (size_t i = 0; i < cb; i++)
      untouched += t->buf.data[i] == TD_SENTINEL;
    TEST_ASSERT(wrong <= untouched, "%zu bytes neither the sender's nor untouched", wrong - untouched);
    td_check_guards(t->buf.data, t->buf.bytes, "dup_header");
    printf("rank 0: failed as it should: %s\n", me.fail_text);
    tmsg_free(t);
    return;
  }
  sc_net_hello_t h = {.magic = SC_NET_HELLO_MAGIC, .version = SC_NET_VERSION, .index = 0, .comm_id = COMM_ID,
                      .token = TOKEN, .from = 1, .to = 0, .count = (uint32_t)(1 + me.cfg.sockets),
                      .eager_bytes = (uint32_t)me.cfg.eager_bytes, .chunk_bytes = cb};
  int ctrl = dup_connect(&h);
  h.index = 1;
  int data = dup_connect(&h);
  sc_net_rec_t size = {.type = SC_NET_REC_SIZE, .seq = 0, .a = cb};
  TEST_OK(sc_socket_send_all(ctrl, &size, sizeof(size), sc_deadline_after(5000), -1, "rank 0"));
  for (;;) {
    sc_net_rec_t r;
    TEST_OK(sc_socket_recv_all(ctrl, &r, sizeof(r), sc_deadline_after(10000), -1, "rank 0"));
    if (r.type == SC_NET_REC_GRANT && r.seq == 0 && r.a == 0 && r.b == 1)
      break;
  }
  size_t one = sizeof(sc_net_chunk_hdr_t) + cb;
  uint8_t *wire = malloc(2 * one);
  TEST_ASSERT(wire != NULL);
  sc_net_chunk_hdr_t hdr = {.magic = SC_NET_CHUNK_MAGIC, .comm_id = COMM_ID, .seq = 0, .chunk = 0, .offset = 0,
                            .length = cb};
  memcpy(wire, &hdr, sizeof(hdr));
  td_fill(wire + sizeof(hdr), cb, msg_seed(1, 0, 0), 1);
  hdr.seq = UINT64_MAX;
  memcpy(wire + one, &hdr, sizeof(hdr));
  memset(wire + one + sizeof(hdr), 0x3c, cb);
  /* One write: the receiver reads both headers in one turn, before it settles the first landing. */
  TEST_OK(sc_socket_send_all(data, wire, 2 * one, sc_deadline_after(5000), -1, "rank 0"));
  char c[sizeof(sc_net_rec_t)];
  /* Until rank 0 closes (it failed), or 10 s: its sentence is its side's to check. */
  while (sc_socket_recv_all(ctrl, c, sizeof(c), sc_deadline_after(10000), -1, "rank 0") == SYMCOMM_OK)
    ;
  free(wire);
  close(data);
  close(ctrl);
}

/* eager_bad: rank 1, played by raw sockets, breaks the EAGER rules (E = 1000
 * bytes, window 4, 4096-byte chunks); rank 0 must fail with the sentence
 * named, write nothing of the receive it posted, and free what it held. */
typedef struct bad_case {
  const char *name;
  uint64_t recv_bytes; /* rank 0's receive; 0: none posted */
  bool recv_late;      /* posted after rank 1's bytes came */
  sc_result_t res;
  const char *a, *b; /* in rank 0's sentence */
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {"wrong_seq", 100, false, SYMCOMM_ERR_REMOTE, "message #1 where #0", "rank 1"},
    {"zero_bytes", 100, false, SYMCOMM_ERR_REMOTE, "#0 of 0 bytes without a grant", "1 to 1000 bytes"},
    {"over_e", 100, false, SYMCOMM_ERR_REMOTE, "#0 of 1001 bytes without a grant", "1 to 1000 bytes"},
    {"over_recv", 100, false, SYMCOMM_ERR_INVALID_USAGE, "receives 100 bytes", "rank 1 sends 200 bytes"},
    {"over_recv_late", 100, true, SYMCOMM_ERR_INVALID_USAGE, "receives 100 bytes", "rank 1 sends 200 bytes"},
    {"granted", 2000, false, SYMCOMM_ERR_INVALID_USAGE, "receives 2000 bytes", "rank 1 sends 1000 bytes"},
    {"over_window", 0, false, SYMCOMM_ERR_REMOTE, "#4 without a grant, 4 or more ahead", "rank 1"},
    {"cut", 1000, false, SYMCOMM_ERR_REMOTE, "rank 1", "closed"},
    {"size_not_eager", 100, false, SYMCOMM_ERR_REMOTE, "#0 of 100 bytes without them", "rank 1"},
    {"other_e", 100, false, SYMCOMM_ERR_INVALID_USAGE, "SYMCOMM_NET_EAGER_BYTES", "rank 1"},
};
static const bad_case_t *g_bad;

static void bad_eager(int fd, uint64_t seq, uint64_t bytes, uint64_t sent) {
  uint8_t *wire = malloc(sizeof(sc_net_rec_t) + bytes);
  TEST_ASSERT(wire != NULL);
  sc_net_rec_t rec = {.type = SC_NET_REC_EAGER, .seq = seq, .a = bytes};
  memcpy(wire, &rec, sizeof(rec));
  td_fill(wire + sizeof(rec), (size_t)bytes, msg_seed(1, 0, (int)seq), 1);
  TEST_OK(sc_socket_send_all(fd, wire, sizeof(rec) + sent, sc_deadline_after(5000), -1, "rank 0"));
  free(wire);
}

static void rank_eager_bad(void) {
  const bad_case_t *bc = g_bad;
  if (me.rank == 0) {
    tmsg_t *t = bc->recv_bytes > 0 ? tmsg_new(SC_NET_RECV, 1, bc->recv_bytes, 0, false) : NULL;
    if (t != NULL && bc->recv_late)
      usleep(200 * 1000);
    if (t != NULL && sc_net_post(me.ep, &t->m) == SYMCOMM_OK)
      wait_all(&t, 1, 10);
    double end = test_now() + 10;
    pthread_mutex_lock(&me.lock);
    while (me.fails == 0 && test_now() < end) {
      pthread_mutex_unlock(&me.lock);
      usleep(10 * 1000);
      pthread_mutex_lock(&me.lock);
    }
    pthread_mutex_unlock(&me.lock);
    expect_fail_sentence(bc->res, bc->a, bc->b);
    if (t != NULL) {
      if (t->finished)
        expect_failed(t, bc->res, "the receive");
      td_check_untouched(t->buf.data, t->buf.bytes, "the receive of a broken eager message");
      td_check_guards(t->buf.data, t->buf.bytes, "eager_bad");
      tmsg_free(t);
    }
    printf("rank 0: %s failed as it should: %s\n", bc->name, me.fail_text);
    return;
  }
  bool other_e = strcmp(bc->name, "other_e") == 0;
  sc_net_hello_t h = {.magic = SC_NET_HELLO_MAGIC, .version = SC_NET_VERSION, .index = 0, .comm_id = COMM_ID,
                      .token = TOKEN, .from = 1, .to = 0, .count = (uint32_t)(1 + me.cfg.sockets),
                      .eager_bytes = (uint32_t)me.cfg.eager_bytes + other_e, .chunk_bytes = me.cfg.chunk_bytes};
  int ctrl = dup_connect(&h);
  if (strcmp(bc->name, "wrong_seq") == 0)
    bad_eager(ctrl, 1, 100, 100);
  else if (strcmp(bc->name, "zero_bytes") == 0)
    bad_eager(ctrl, 0, 0, 0);
  else if (strcmp(bc->name, "over_e") == 0)
    bad_eager(ctrl, 0, 1001, 1001);
  else if (strcmp(bc->name, "over_recv") == 0 || strcmp(bc->name, "over_recv_late") == 0)
    bad_eager(ctrl, 0, 200, 200);
  else if (strcmp(bc->name, "over_window") == 0)
    for (int i = 0; i < 5; i++)
      bad_eager(ctrl, (uint64_t)i, 100, 100);
  else if (strcmp(bc->name, "size_not_eager") == 0) {
    sc_net_rec_t size = {.type = SC_NET_REC_SIZE, .seq = 0, .a = 100};
    TEST_OK(sc_socket_send_all(ctrl, &size, sizeof(size), sc_deadline_after(5000), -1, "rank 0"));
  } else if (strcmp(bc->name, "granted") == 0) {
    for (;;) {
      sc_net_rec_t r;
      TEST_OK(sc_socket_recv_all(ctrl, &r, sizeof(r), sc_deadline_after(10000), -1, "rank 0"));
      if (r.type == SC_NET_REC_GRANT && r.seq == 0 && r.a == 0 && r.b == 1)
        break;
    }
    bad_eager(ctrl, 0, 1000, 1000);
  } else if (strcmp(bc->name, "cut") == 0) {
    usleep(50 * 1000); /* the receive is posted */
    bad_eager(ctrl, 0, 1000, 500);
    usleep(50 * 1000); /* read in another turn than the close */
    close(ctrl);
    return;
  }
  char c[sizeof(sc_net_rec_t)];
  /* Until rank 0 closes (it failed), or 10 s: its sentence is its side's to check. */
  while (sc_socket_recv_all(ctrl, c, sizeof(c), sc_deadline_after(10000), -1, "rank 0") == SYMCOMM_OK)
    ;
  close(ctrl);
}

int __lsan_do_recoverable_leak_check(void) __attribute__((weak)); /* LeakSanitizer's, in ASan builds */

static void read_full(int fd, void *buf, size_t len) {
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, (char *)buf + got, len - got);
    TEST_ASSERT(n > 0, "a pipe closed early (read %zd: %s)", n, n < 0 ? strerror(errno) : "end");
    got += (size_t)n;
  }
}

static void rank_main(int rank, int nranks, int up, int down) {
  me.rank = rank;
  me.nranks = nranks;
  exchanging = nranks;
  me.up = up;
  me.down = down;
  char name[64];
  snprintf(name, sizeof(name), "net test rank %d", rank);
  sc_net_config_t cfg = {.rank = rank, .nranks = nranks, .comm_id = COMM_ID, .token = TOKEN,
                         .timeout_ms = 30000, .name = name, .fail = on_fail};
  TEST_OK(sc_net_config_from_env(&cfg));
  if (strcmp(g_mode, "sigstop") == 0)
    cfg.timeout_ms = 2000;
  if (strcmp(g_mode, "staging") == 0) {
    cfg.chunk_bytes = 64 * KIB;
    cfg.window = 4;
  }
  if (strcmp(g_mode, "bench") == 0)
    cfg.sockets = atoi(g_argv[3]);
  if (strcmp(g_mode, "fault_seq") == 0 && rank == 1)
    setenv("SYMCOMM_NET_FAULT", "seq", 1);
  if (strcmp(g_mode, "dup_header") == 0) {
    cfg.chunk_bytes = 4096;
    cfg.eager_bytes = 0; /* its message is granted: rank 1 is played by hand */
  }
  if (strcmp(g_mode, "eager") == 0 && g_argv[3] != NULL && rank == 0)
    cfg.window = atoi(g_argv[3]); /* windows may differ: each receiver says how far ahead it takes */
  if (strcmp(g_mode, "eager_bad") == 0) {
    cfg.chunk_bytes = 4096;
    cfg.eager_bytes = 1000;
    cfg.window = 4;
  }
  me.cfg = cfg;
  sc_net_addr_t addr, addrs[MAX_RANKS];
  TEST_OK(sc_net_endpoint_open(&cfg, &me.ep, &addr));
  TEST_ASSERT(write(up, &addr, sizeof(addr)) == (ssize_t)sizeof(addr));
  read_full(down, addrs, sizeof(addrs[0]) * (size_t)nranks);
  memcpy(g_addrs, addrs, sizeof(addrs[0]) * (size_t)nranks);
  bool remote[MAX_RANKS];
  for (int r = 0; r < nranks; r++)
    remote[r] = r != rank;
  TEST_OK(sc_net_endpoint_set_peers(me.ep, addrs, remote));

  if (strcmp(g_mode, "sizes") == 0)
    rank_sizes();
  else if (strcmp(g_mode, "peers") == 0)
    rank_peers();
  else if (strcmp(g_mode, "many") == 0)
    rank_many();
  else if (strcmp(g_mode, "eager") == 0)
    rank_eager();
  else if (strcmp(g_mode, "staging") == 0)
    rank_staging();
  else if (strcmp(g_mode, "mismatch") == 0)
    rank_mismatch(g_argv[2] != NULL ? strtoull(g_argv[2], NULL, 0) : 1000,
                  g_argv[2] != NULL && g_argv[3] != NULL ? strtoull(g_argv[3], NULL, 0) : 2000);
  else if (strcmp(g_mode, "stray") == 0)
    rank_stray();
  else if (strcmp(g_mode, "kill9") == 0 || strcmp(g_mode, "sigstop") == 0)
    rank_stream();
  else if (strcmp(g_mode, "fault_seq") == 0)
    rank_fault_seq();
  else if (strcmp(g_mode, "dup_header") == 0)
    rank_dup_header();
  else if (strcmp(g_mode, "eager_bad") == 0)
    rank_eager_bad();
  else if (strcmp(g_mode, "bench") == 0)
    rank_bench(strtoull(g_argv[2], NULL, 0), atoi(g_argv[4]));
  sc_net_endpoint_close(me.ep);
  TEST_ASSERT(sc_net_wake_fd() == -1, "the progress thread outlived the last endpoint");
  /* Ranks end with _exit(): under ASan, what the endpoint held (bytes that
   * came eagerly, say) must be freed by now. */
  if (__lsan_do_recoverable_leak_check != NULL)
    TEST_ASSERT(__lsan_do_recoverable_leak_check() == 0, "rank %d leaked memory (report above)", me.rank);
  fflush(stdout);
}

/* With keep_down, each rank's pipe from the parent stays open (job->down) after the addresses. */
static void job_start(job_t *job, int n, bool keep_down) {
  job->n = n;
  int *downs = job->down;
  for (int r = 0; r < n; r++) {
    int up[2], down[2];
    TEST_ASSERT(pipe(up) == 0 && pipe(down) == 0);
    fflush(stdout);
    pid_t pid = fork();
    TEST_ASSERT(pid >= 0);
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      for (int q = 0; q < r; q++) {
        close(job->up[q]);
        close(downs[q]);
      }
      rank_main(r, n, up[1], down[0]);
      _exit(0);
    }
    close(up[1]);
    close(down[0]);
    job->pids[r] = pid;
    job->up[r] = up[0];
    downs[r] = down[1];
  }
  for (int r = 0; r < n; r++)
    read_full(job->up[r], &job->addrs[r], sizeof(job->addrs[r]));
  for (int r = 0; r < n; r++) {
    TEST_ASSERT(write(downs[r], job->addrs, sizeof(job->addrs[0]) * (size_t)n) ==
                (ssize_t)(sizeof(job->addrs[0]) * (size_t)n));
    if (!keep_down)
      close(downs[r]);
  }
}

static note_t job_note(job_t *job, int r, int kind) {
  note_t n;
  read_full(job->up[r], &n, sizeof(n));
  TEST_ASSERT(n.kind == kind, "rank %d said %d, expected %d", r, n.kind, kind);
  return n;
}

/* ---- strangers at a rank's door */

static int stray_connect(const job_t *job, int r) {
  char text[96];
  sc_net_default_ops()->addr_text(&job->addrs[r], text, sizeof(text));
  sc_sockaddr_t sa;
  TEST_OK(sc_sockaddr_parse(text, -1, &sa));
  int fd;
  TEST_OK(sc_socket_connect(&sa, sc_deadline_after(5000), -1, &fd));
  return fd;
}

/* The rank closes it (EOF or reset) within 5 s. */
static void stray_expect_closed(int fd, const char *what) {
  char buf[64];
  int64_t end = sc_now_ms() + 5000;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    TEST_ASSERT(poll(&p, 1, 100) >= 0);
    if (p.revents) {
      ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      TEST_ASSERT(n <= 0, "%s: the rank answered %zd bytes", what, n);
      if (n == 0 || errno != EAGAIN)
        break;
    }
    TEST_ASSERT(sc_now_ms() < end, "%s: the rank did not close the connection in 5 s", what);
  }
  close(fd);
  printf("stranger: %s: closed by the rank\n", what);
  usleep(20 * 1000); /* the ranks go on with a few more rounds */
}

static void stray_visit(const job_t *job, int r) {
  char garbage[200];
  for (size_t i = 0; i < sizeof(garbage); i++)
    garbage[i] = (char)td_mix(99, r, i);
  int fd = stray_connect(job, r);
  TEST_OK(sc_socket_send_all(fd, garbage, sizeof(garbage), sc_deadline_after(5000), -1, "rank"));
  stray_expect_closed(fd, "garbage");

  /* Claims idle rank 2's control connection (free: only the token is wrong). */
  sc_net_config_t env = {0};
  TEST_OK(sc_net_config_from_env(&env));
  sc_net_hello_t h = {.magic = SC_NET_HELLO_MAGIC, .version = SC_NET_VERSION, .index = 0, .comm_id = COMM_ID,
                      .token = TOKEN ^ 1, .from = 2, .to = r, .count = (uint32_t)(1 + env.sockets),
                      .eager_bytes = (uint32_t)env.eager_bytes, .chunk_bytes = env.chunk_bytes};
  fd = stray_connect(job, r);
  TEST_OK(sc_socket_send_all(fd, &h, sizeof(h), sc_deadline_after(5000), -1, "rank"));
  stray_expect_closed(fd, "a hello with a wrong token");

  /* Knows the token, claims the peer's control connection, which is open already. */
  h.token = TOKEN;
  h.from = 1 - r;
  fd = stray_connect(job, r);
  TEST_OK(sc_socket_send_all(fd, &h, sizeof(h), sc_deadline_after(5000), -1, "rank"));
  stray_expect_closed(fd, "a duplicate control connection");

  fd = stray_connect(job, r); /* half a hello, then gone */
  TEST_OK(sc_socket_send_all(fd, &h, sizeof(h) / 2, sc_deadline_after(5000), -1, "rank"));
  close(fd);
  fd = stray_connect(job, r); /* says nothing at all */
  close(fd);
}

/* ---- main */

static int usage(void) {
  fprintf(stderr, "usage: test_net_engine sizes N | peers N | eager N [W0] | many | staging | mismatch [SEND RECV] | stray | "
                  "kill9 sender|receiver | sigstop sender|receiver | fault_seq | dup_header | eager_bad | "
                  "bench BYTES SOCKETS ITERS\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  g_mode = argv[1];
  g_argv = argv;
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* Loopback only: tests send nothing to other interfaces. */
  setenv("SYMCOMM_SOCKET_IFNAME", "=lo", 1);
  signal(SIGPIPE, SIG_IGN);
  job_t job;
  int n = 2;
  if (strcmp(g_mode, "sizes") == 0 || strcmp(g_mode, "peers") == 0 || strcmp(g_mode, "eager") == 0) {
    if (argc < 3)
      return usage();
    n = atoi(argv[2]);
    TEST_ASSERT(n >= 2 && n <= MAX_RANKS);
  } else if (strcmp(g_mode, "bench") == 0 && argc < 5) {
    return usage();
  }
  bool stream = strcmp(g_mode, "kill9") == 0 || strcmp(g_mode, "sigstop") == 0;
  int victim = -1;
  if (stream) {
    if (argc < 3 || (strcmp(argv[2], "sender") != 0 && strcmp(argv[2], "receiver") != 0))
      return usage();
    victim = strcmp(argv[2], "sender") == 0 ? 1 : 0; /* rank 1 sends, rank 0 receives */
  }
  if (strcmp(g_mode, "sizes") == 0) { /* the parameters' ranges are checked, naming the variable */
    static const char *bad[][2] = {{"SYMCOMM_NET_SOCKETS", "0"}, {"SYMCOMM_NET_CHUNK_BYTES", "100"},
                                   {"SYMCOMM_NET_WINDOW", "2000"}, {"SYMCOMM_NET_SOCKETS", "two"},
                                   {"SYMCOMM_NET_EAGER_BYTES", "-1"}};
    for (int i = 0; i < 5; i++) {
      sc_net_config_t c = {0};
      setenv(bad[i][0], bad[i][1], 1);
      TEST_EXPECT_RESULT(sc_net_config_from_env(&c), SYMCOMM_ERR_INVALID_ARGUMENT);
      TEST_ASSERT(test_contains(sc_error_last(), bad[i][0]), "'%s' does not name %s", sc_error_last(), bad[i][0]);
      unsetenv(bad[i][0]);
    }
    sc_net_config_t c = {0};
    TEST_OK(sc_net_config_from_env(&c));
    TEST_ASSERT(c.sockets == 4 && c.chunk_bytes == 1 * MIB && c.window == 32 && c.eager_bytes == 64 * KIB);
    setenv("SYMCOMM_NET_CHUNK_BYTES", "4096", 1); /* an eager message is one chunk */
    TEST_OK(sc_net_config_from_env(&c));
    TEST_ASSERT(c.eager_bytes == 4096, "eager bytes %zu with 4096-byte chunks", c.eager_bytes);
    unsetenv("SYMCOMM_NET_CHUNK_BYTES");
    c.nranks = 1;
    c.eager_bytes = c.chunk_bytes + 1; /* set by hand past the limit: the sentence says which */
    sc_net_endpoint_t *ep = NULL;
    sc_net_addr_t addr;
    TEST_EXPECT_RESULT(sc_net_endpoint_open(&c, &ep, &addr), SYMCOMM_ERR_INVALID_ARGUMENT);
    TEST_ASSERT(ep == NULL && test_contains(sc_error_last(), "up to 4097 bytes without a grant"), "'%s'",
                sc_error_last());
  }
  double t0 = test_now();
  if (strcmp(g_mode, "eager_bad") == 0) { /* a job per case: a failed endpoint stays failed */
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
      g_bad = &bad_cases[i];
      job_start(&job, 2, false);
      for (int r = 0; r < 2; r++) {
        int status;
        TEST_ASSERT(waitpid(job.pids[r], &status, 0) == job.pids[r]);
        TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: rank %d ended with status 0x%x",
                    g_bad->name, r, status);
        close(job.up[r]);
      }
    }
    printf("ok: %s (%zu cases, %.1f s)\n", g_mode, sizeof(bad_cases) / sizeof(bad_cases[0]), test_now() - t0);
    return 0;
  }
  bool stray = strcmp(g_mode, "stray") == 0;
  if (stray)
    n = 3;
  job_start(&job, n, stray);
  if (stray) {
    for (int r = 0; r < n; r++)
      job_note(&job, r, NOTE_STARTED);
    for (int r = 0; r < 2; r++)
      stray_visit(&job, r);
    for (int r = 0; r < n; r++)
      close(job.down[r]);
  }
  if (stream) {
    int other = 1 - victim;
    job_note(&job, 0, NOTE_STARTED); /* a first 64 MiB landed; later ones are under way */
    usleep(30 * 1000);
    bool kill9 = strcmp(g_mode, "kill9") == 0;
    int64_t hit_ms = sc_now_ms();
    TEST_ASSERT(kill(job.pids[victim], kill9 ? SIGKILL : SIGSTOP) == 0);
    note_t f = job_note(&job, other, NOTE_FAILED);
    double after = (double)(f.t_ms - hit_ms) / 1000.0;
    printf("rank %d failed %.3f s after the %s of rank %d: %s\n", other, after, kill9 ? "kill -9" : "SIGSTOP",
           victim, f.text);
    char who[32];
    snprintf(who, sizeof(who), "rank %d", victim);
    TEST_ASSERT(test_contains(f.text, who), "the sentence does not name %s", who);
    if (kill9) {
      TEST_ASSERT(test_contains(f.text, "SYMCOMM_ERR_REMOTE") && test_contains(f.text, "closed"));
      /* The sentence already says the close was seen, not a timeout; the bound only
       * catches a death noticed late. 5 s: under ThreadSanitizer on 2 cores the
       * 64 MiB copies in flight delayed it to 2.9 s. */
      TEST_ASSERT(after < 5.0, "the death of rank %d was seen after %.3f s", victim, after);
    } else {
      TEST_ASSERT(test_contains(f.text, "SYMCOMM_ERR_TIMEOUT"));
      TEST_ASSERT(after > 1.5 && after < 8.0, "a stopped rank was seen after %.3f s (timeout 2 s)", after);
      TEST_ASSERT(kill(job.pids[victim], SIGKILL) == 0);
    }
  }
  for (int r = 0; r < n; r++) {
    int status;
    TEST_ASSERT(waitpid(job.pids[r], &status, 0) == job.pids[r]);
    if (r == victim)
      TEST_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    else
      TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d ended with status 0x%x", r, status);
  }
  printf("ok: %s (%d ranks, %.1f s)\n", g_mode, n, test_now() - t0);
  return 0;
}
