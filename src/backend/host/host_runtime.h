/* The device runtime (device/runtime.h) of the simulated backend: programs
 * run as plain function calls on a stream's worker thread. Loads and stores
 * are C11-model atomics (the __atomic builtins, which work on the plain
 * uint64_t slots that programs share with CUDA); a wait sleeps in a futex on
 * the doorbell's ring counter. The futex is the shared (not private) kind,
 * because the doorbell lives in memory mapped by several processes.
 *
 * Include this, then the program headers (device/signal_wait.h, ...). */
#ifndef SC_BACKEND_HOST_RUNTIME_H
#define SC_BACKEND_HOST_RUNTIME_H

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "device/program.h"
#include "util/clock.h"

/* Longest single sleep: how often a sleeping wait rechecks its communicator's
 * stop word and its no-progress timeout. A stop (an abort, a failed rank) is
 * seen within this; the cost is one futex timeout per slice of a long wait. */
#define SC_HOST_SLEEP_SLICE_MS 25
/* A wait yields the CPU this many times before it sleeps (sc_dev_sleep), and
 * for this long at most: a yield that lets a busy process (another
 * job, a compiler) run costs that process's whole time slice, so yielding
 * on after that only delays the futex sleep, whose wake is prompt. With two
 * busy loops beside 16 ranks on 2 cores, test_p2p_eager alt's 300 rounds
 * took 19 s yielding 64 times, 10.5 s with this bound; alone, 3000 rounds
 * 13-15 s against 10.5-11.7. No yield at all: 2.3 s loaded, but test_coll
 * blocks (16 ranks of 16 blocks) 3x slower alone. */
#define SC_HOST_YIELDS 64
#define SC_HOST_YIELD_BUDGET_US 100
/* Waits sleep on the bell here: no spinning outside them (runtime.h). */
#define SC_DEV_QUICK_POLLS 0

typedef struct sc_dev_ctx {
  sc_guard_t guard;         /* of the running program (sc_dev_begin) */
  int64_t last_progress_ms; /* sc_now_ms() of sc_dev_begin or the last sc_dev_progress */
  sc_dev_error_t *err;      /* where the launch's error goes */
  uint64_t departed_seen;   /* the status block's departed ranks that sleeps reported */
  uint32_t block, blocks;   /* the block running, of how many (run one after another) */
} sc_dev_ctx_t;

/* A context with no guard yet: its sleeps are bounded by nothing. */
static inline void sc_host_ctx_init(sc_dev_ctx_t *ctx, sc_dev_error_t *err) {
  memset(&ctx->guard, 0, sizeof(ctx->guard));
  ctx->guard.timeout_ms = -1;
  ctx->last_progress_ms = sc_now_ms();
  ctx->err = err;
  ctx->departed_seen = 0;
  ctx->block = 0;
  ctx->blocks = 1;
}

/* A block is one thread here: it leads itself, and syncs with nobody. */
static inline uint32_t sc_dev_block(const sc_dev_ctx_t *ctx) { return ctx->block; }
static inline uint32_t sc_dev_blocks(const sc_dev_ctx_t *ctx) { return ctx->blocks; }
static inline uint32_t sc_dev_thread(const sc_dev_ctx_t *ctx) { (void)ctx; return 0; }
static inline uint32_t sc_dev_threads(const sc_dev_ctx_t *ctx) { (void)ctx; return 1; }
static inline int sc_dev_leader(const sc_dev_ctx_t *ctx) { (void)ctx; return 1; }
static inline void sc_dev_sync(sc_dev_ctx_t *ctx) { (void)ctx; }
static inline int sc_dev_share(sc_dev_ctx_t *ctx, int v) { (void)ctx; return v; }

static inline uint64_t sc_dev_load(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sc_dev_store(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void sc_dev_add(uint64_t *p, uint64_t v) {
  __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}

static inline void sc_dev_or(uint64_t *p, uint64_t v) {
  __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL);
}

static inline uint32_t sc_dev_load32(const uint32_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t sc_dev_load_poll32(const uint32_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sc_dev_store32(uint32_t *p, uint32_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Acquire already: the fence after the loop has nothing left to do (and
 * ThreadSanitizer follows acquire loads, not fences). */
static inline uint64_t sc_dev_load_poll(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sc_dev_acquire(void) {}

/* Set by a test (before the work it watches is queued), called at each of the
 * programs' test points (device/runtime.h) on the worker's thread; NULL
 * otherwise. */
extern void (*sc_host_test_point)(int where);

static inline void sc_dev_test_point(int where) {
  if (sc_host_test_point != NULL)
    sc_host_test_point(where);
}

static inline void sc_dev_store_relaxed(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t sc_dev_load_own(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void sc_dev_store_own(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void sc_dev_ll_store(uint64_t *line, uint64_t w0, uint64_t w1) {
  __atomic_store_n(&line[0], w0, __ATOMIC_RELAXED);
  __atomic_store_n(&line[1], w1, __ATOMIC_RELAXED);
}

static inline void sc_dev_ll_load(const uint64_t *line, uint64_t *w0, uint64_t *w1) {
  *w0 = __atomic_load_n(&line[0], __ATOMIC_RELAXED);
  *w1 = __atomic_load_n(&line[1], __ATOMIC_RELAXED);
}

static inline int sc_dev_any(sc_dev_ctx_t *ctx, int v) {
  (void)ctx;
  return v;
}

static inline int sc_dev_any_but(sc_dev_ctx_t *ctx, int v, int weak) {
  (void)ctx;
  (void)weak;
  return v;
}

static inline int sc_dev_cas32(uint32_t *p, uint32_t expected, uint32_t v) {
  return __atomic_compare_exchange_n(p, &expected, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static inline uint32_t sc_dev_count_own32(uint32_t *p) {
  return __atomic_fetch_add(p, 1, __ATOMIC_ACQ_REL);
}

static inline uint64_t sc_dev_load_own_acquire(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sc_dev_store_own_release(uint64_t *p, uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Acquire already, as sc_dev_load_poll: the fence after has nothing left to do. */
static inline uint64_t sc_dev_load_own_poll(const uint64_t *p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sc_dev_acquire_own(void) {}

static inline uint32_t sc_dev_ticket_own32(uint32_t *p) {
  return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

static inline void sc_dev_skip_own32(uint32_t *p) { (void)__atomic_fetch_add(p, 1, __ATOMIC_RELAXED); }

static inline uint32_t sc_dev_count_down_own32(uint32_t *p) {
  return __atomic_fetch_sub(p, 1, __ATOMIC_ACQ_REL);
}

static inline uint32_t sc_dev_bell_read(sc_doorbell_t *bell) {
  return __atomic_load_n(&bell->rings, __ATOMIC_ACQUIRE);
}

static inline long sc_host_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts) {
  return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* The wake costs a system call: only when someone sleeps in the futex. A
 * sleeper counts itself before it sleeps, a ringer rings before it counts
 * sleepers (both sequentially consistent), so either the ringer sees the
 * sleeper or the sleeper's futex sees the new ring and does not sleep. */
static inline void sc_dev_ring(sc_doorbell_t *bell) {
  __atomic_fetch_add(&bell->rings, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&bell->sleepers, __ATOMIC_SEQ_CST) != 0)
    sc_host_futex(&bell->rings, FUTEX_WAKE, INT_MAX, NULL);
  if (bell->notify_fd > 0) {
    uint64_t one = 1;
    ssize_t n = write(bell->notify_fd, &one, sizeof(one)); /* full counter: already awake */
    (void)n;
  }
}

static inline void sc_dev_copy(sc_dev_ctx_t *ctx, void *dst, const void *src, size_t n) {
  (void)ctx;
  memmove(dst, src, n);
}

/* Whether the guard's communicator stopped; if so, why goes into the error
 * record (the status block's fields are written before its stop word). */
static inline int sc_host_stopped(const sc_dev_ctx_t *ctx) {
  const sc_dev_status_t *st = ctx->guard.status;
  if (st == NULL)
    return 0;
  uint32_t stop = __atomic_load_n(&st->stop, __ATOMIC_ACQUIRE);
  if (stop == SC_STOP_NONE)
    return 0;
  ctx->err->stop = (int32_t)stop;
  ctx->err->stop_rank = st->rank;
  ctx->err->stop_result = st->result;
  ctx->err->why = st->why;
  return 1;
}

/* The blocks run one after another here: no other block of the launch can
 * hear of a failure before its block ends and publishes it. */
static inline void sc_dev_publish_early(sc_dev_ctx_t *ctx, const sc_dev_error_t *err) {
  (void)ctx;
  (void)err;
}

static inline int sc_dev_stopped(sc_dev_ctx_t *ctx) {
  return sc_host_stopped(ctx) ? SC_DEV_ABORTED : 0;
}

static inline uint64_t sc_dev_departed(sc_dev_ctx_t *ctx) {
  const sc_dev_status_t *st = ctx->guard.status;
  uint64_t departed = st != NULL ? __atomic_load_n(&st->departed, __ATOMIC_ACQUIRE) : 0;
  ctx->departed_seen |= departed;
  return departed;
}

static inline void sc_dev_enter(sc_dev_ctx_t *ctx, const sc_guard_t *guard) {
  ctx->guard = *guard;
  ctx->departed_seen = 0;
  ctx->last_progress_ms = sc_now_ms();
  ctx->err->call = guard->call;
  ctx->err->seq = guard->seq;
}

static inline int sc_dev_begin(sc_dev_ctx_t *ctx, const sc_guard_t *guard) {
  sc_dev_enter(ctx, guard);
  return sc_host_stopped(ctx) ? SC_DEV_ABORTED : 0;
}

static inline void sc_dev_progress(sc_dev_ctx_t *ctx) { ctx->last_progress_ms = sc_now_ms(); }

/* A stream's worker runs one launch after the other. */
static inline void sc_dev_start_next(sc_dev_ctx_t *ctx) { (void)ctx; }
static inline void sc_dev_wait_previous(sc_dev_ctx_t *ctx) { (void)ctx; }

static inline int sc_dev_sleep(sc_dev_ctx_t *ctx, sc_doorbell_t *bell, uint32_t seen) {
  /* Before sleeping (and after the poll below, if any), give the CPU away a
   * few times: when ranks outnumber cores, the rank that will ring the bell is
   * likely waiting for this core, and a yield hands it over at once, where a
   * futex sleep and wake-up would take a round trip through the scheduler.
   * Both are bounded; then sleep. */
  if (ctx->guard.spin_us > 0) {
    /* A rank with a core of its own polls a little first: the peer it waits
     * for is running now on another core. */
    int64_t until = sc_now_us() + ctx->guard.spin_us;
    for (int i = 0;; i++) {
      if (__atomic_load_n(&bell->rings, __ATOMIC_ACQUIRE) != seen)
        return 0;
      if ((i & 63) == 63 && sc_now_us() >= until)
        break;
      sc_cpu_relax();
    }
  }
  int64_t yields_until = sc_now_us() + SC_HOST_YIELD_BUDGET_US;
  for (int i = 0; i < SC_HOST_YIELDS; i++) {
    sched_yield();
    if (__atomic_load_n(&bell->rings, __ATOMIC_ACQUIRE) != seen)
      return 0;
    if (sc_now_us() >= yields_until)
      break;
  }
  for (;;) {
    if (sc_host_stopped(ctx))
      return SC_DEV_ABORTED;
    const sc_dev_status_t *st = ctx->guard.status;
    if (st != NULL && (__atomic_load_n(&st->departed, __ATOMIC_RELAXED) & ~ctx->departed_seen) != 0)
      return SC_DEV_PEER_LEFT; /* the program looks with sc_dev_departed */
    int64_t slice = SC_HOST_SLEEP_SLICE_MS;
    if (ctx->guard.timeout_ms >= 0) {
      int64_t left = ctx->last_progress_ms + ctx->guard.timeout_ms - sc_now_ms();
      if (left <= 0)
        return SC_DEV_TIMEOUT;
      if (left < slice)
        slice = left;
    }
    struct timespec ts = {.tv_sec = slice / 1000, .tv_nsec = (slice % 1000) * 1000000};
    /* Returns at once (EAGAIN) if the bell already differs from `seen`. */
    __atomic_fetch_add(&bell->sleepers, 1, __ATOMIC_SEQ_CST);
    long rc = sc_host_futex(&bell->rings, FUTEX_WAIT, seen, &ts);
    int saved = errno;
    __atomic_fetch_sub(&bell->sleepers, 1, __ATOMIC_SEQ_CST);
    errno = saved;
    if (rc == 0 || errno == EAGAIN)
      return 0; /* rung, or a spurious wake: the caller checks its condition again */
    if (errno == EFAULT)
      return SC_DEV_BAD_ARGS; /* the bell's memory was unmapped under the program */
    /* ETIMEDOUT (a slice passed) or EINTR: recheck the stop word and the clock. */
  }
}

#endif
