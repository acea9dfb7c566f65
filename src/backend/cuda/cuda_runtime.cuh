/* The device runtime (device/runtime.h) of the CUDA backend: a block of a
 * kernel runs a program, its threads together. Flags are read and written at
 * system scope (other GPUs and the host see them), with acquire loads,
 * release stores and acq_rel atomics in PTX. A wait polls: GPUs have no
 * futex, so doorbells are not rung, and sc_dev_sleep is a short nap that
 * looks at the communicator's stop word, its departed ranks and the
 * no-progress clock (%globaltimer) only every SC_CUDA_POLLS_PER_CHECK polls,
 * which keeps a poll cheap (the issue's cost rule) and still notices a stop
 * within a few milliseconds.
 *
 * Include this, then the program headers (device/signal_wait.h, ...). */
#ifndef SC_BACKEND_CUDA_RUNTIME_CUH
#define SC_BACKEND_CUDA_RUNTIME_CUH

#include <stdint.h>

#include "backend/cuda/cuda_record.h"
#include "device/runtime.h"

#define SC_CUDA_POLLS_PER_CHECK 2048u
/* A leader's quick re-checks of what it waits for before the program's
 * wait (runtime.h): a round of the wait costs several block-wide syncs. */
#define SC_DEV_QUICK_POLLS 64
#define SC_CUDA_NAP_NS 100u

typedef struct sc_dev_ctx {
  sc_guard_t guard;          /* of the running program (sc_dev_begin) */
  uint64_t last_progress_ns; /* %globaltimer at sc_dev_begin or the last sc_dev_progress */
  uint64_t departed_seen;    /* the status block's departed ranks that sleeps reported */
  sc_dev_error_t *err;       /* the block's error record (shared memory) */
  int *share;                /* the block's slot for sc_dev_share (shared memory) */
  uint32_t polls;            /* sleeps since the last check of stop, departures and clock */
  const sc_dev_status_t *early_status; /* whose stop word the leader read at the start */
  uint32_t early_stop;                 /* what it read (sc_cuda_read_stop_early) */
  sc_dev_status_t *status;             /* the kernel's status block argument (may be 0) */
  sc_cuda_record_t *record;            /* the stream's failure record (may be 0) */
} sc_dev_ctx_t;

SC_DEV_FN uint64_t sc_cuda_now_ns(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

SC_DEV_FN void sc_cuda_ctx_init(sc_dev_ctx_t *ctx, sc_dev_error_t *err, int *share,
                                sc_dev_status_t *status, sc_cuda_record_t *record) {
  ctx->guard.status = 0;
  ctx->guard.timeout_ms = -1;
  ctx->guard.spin_us = 0;
  ctx->guard.call = 0;
  ctx->guard.seq = 0;
  ctx->last_progress_ns = sc_cuda_now_ns();
  ctx->departed_seen = 0;
  ctx->err = err;
  ctx->share = share;
  ctx->polls = 0;
  ctx->early_status = 0;
  ctx->early_stop = 0;
  ctx->status = status;
  ctx->record = record;
}

/* Defined in kernels/kernel.cuh, after the status block's functions. */
SC_DEV_FN void sc_dev_publish_early(sc_dev_ctx_t *ctx, const sc_dev_error_t *err);

/* The leader of block 0 reads the launch's status block's stop word first
 * thing: host memory, a microsecond away, read while the program loads its
 * arguments (sc_dev_begin uses it when the program's guard names the same
 * block). The other blocks do not look at the start: with every block
 * reading that word of host memory, a launch cost about a microsecond more
 * per block, as if the reads were served one after another (2 H200s, 128
 * blocks: 152 us against 17 without); block 0's check
 * fails the launch, the stop's marks stop the other blocks' barriers, and
 * their waits look at the stop word every SC_CUDA_POLLS_PER_CHECK polls. */
SC_DEV_FN void sc_cuda_read_stop_early(sc_dev_ctx_t *ctx, const sc_dev_status_t *status) {
  if (threadIdx.x != 0 || blockIdx.x != 0 || status == 0)
    return;
  uint32_t v;
  asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(&status->stop) : "memory");
  ctx->early_status = status;
  ctx->early_stop = v;
}

SC_DEV_FN uint32_t sc_dev_block(const sc_dev_ctx_t *ctx) { return blockIdx.x; }
SC_DEV_FN uint32_t sc_dev_blocks(const sc_dev_ctx_t *ctx) { return gridDim.x; }
SC_DEV_FN uint32_t sc_dev_thread(const sc_dev_ctx_t *ctx) { return threadIdx.x; }
SC_DEV_FN uint32_t sc_dev_threads(const sc_dev_ctx_t *ctx) { return blockDim.x; }
SC_DEV_FN int sc_dev_leader(const sc_dev_ctx_t *ctx) { return threadIdx.x == 0; }
SC_DEV_FN void sc_dev_sync(sc_dev_ctx_t *ctx) { __syncthreads(); }

/* The second sync keeps a later share from overwriting the slot before every
 * thread has read it. */
SC_DEV_FN int sc_dev_share(sc_dev_ctx_t *ctx, int v) {
  if (threadIdx.x == 0)
    *ctx->share = v;
  __syncthreads();
  int r = *ctx->share;
  __syncthreads();
  return r;
}

/* ---- flags, at system scope */

SC_DEV_FN uint64_t sc_dev_load(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN void sc_dev_store(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The old value is not read, so a release reduction is all the acq_rel of
 * the host's atomics amounts to. */
SC_DEV_FN void sc_dev_add(uint64_t *p, uint64_t v) {
  asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

SC_DEV_FN void sc_dev_or(uint64_t *p, uint64_t v) {
  asm volatile("red.release.sys.or.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

SC_DEV_FN uint32_t sc_dev_load32(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN uint32_t sc_dev_load_poll32(const uint32_t *p) {
  uint32_t v;
  asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN void sc_dev_store32(uint32_t *p, uint32_t v) {
  asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

SC_DEV_FN int sc_dev_cas32(uint32_t *p, uint32_t expected, uint32_t v) {
  uint32_t old;
  asm volatile("atom.acq_rel.sys.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(expected), "r"(v)
               : "memory");
  return old == expected;
}

/* One atomic at the GPU's L2, where a compare-and-swap loop at system scope
 * made the blocks of a launch take turns, a round trip each. */
SC_DEV_FN uint32_t sc_dev_count_own32(uint32_t *p) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}

/* Relaxed: an acq_rel atomic at GPU scope costs a fence on each side. */
SC_DEV_FN uint32_t sc_dev_ticket_own32(uint32_t *p) {
  uint32_t old;
  asm volatile("atom.relaxed.gpu.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}

SC_DEV_FN void sc_dev_skip_own32(uint32_t *p) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

SC_DEV_FN uint32_t sc_dev_count_down_own32(uint32_t *p) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], -1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}

SC_DEV_FN uint64_t sc_dev_load_poll(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN void sc_dev_acquire(void) { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

/* Only the simulated backend's tests act at these (device/runtime.h). */
SC_DEV_FN void sc_dev_test_point(int where) { (void)where; }

SC_DEV_FN void sc_dev_store_relaxed(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* This rank's own counters: written by its earlier launches (the kernel
 * boundary orders them) or by the other blocks of this one only where the
 * program says so (sc_coll_finish), at GPU scope. */
SC_DEV_FN uint64_t sc_dev_load_own(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN void sc_dev_store_own(uint64_t *p, uint64_t v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* The same with order, at GPU scope: for words that no other GPU and not
 * the host reads or writes, no system-wide fence. */
SC_DEV_FN uint64_t sc_dev_load_own_acquire(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

SC_DEV_FN void sc_dev_store_own_release(uint64_t *p, uint64_t v) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* Several acquires at once: relaxed loads, all in flight, then one fence,
 * where each ld.acquire would hold back every later load for its own trip. */
SC_DEV_FN uint64_t sc_dev_load_own_poll(const uint64_t *p) { return sc_dev_load_own(p); }

SC_DEV_FN void sc_dev_acquire_own(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* One 16-byte access, whose 8-byte halves are each seen whole: no fence,
 * since a word's flag and its data travel in the same store. */
SC_DEV_FN void sc_dev_ll_store(uint64_t *line, uint64_t w0, uint64_t w1) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(line), "l"(w0), "l"(w1) : "memory");
}

SC_DEV_FN void sc_dev_ll_load(const uint64_t *line, uint64_t *w0, uint64_t *w1) {
  uint64_t a, b;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(line) : "memory");
  *w0 = a;
  *w1 = b;
}

/* The shared slot once the threads whose `write` holds wrote their v (one
 * of them wins; the slot's earlier readers passed the syncs of sc_dev_share). */
SC_DEV_FN int sc_cuda_share_written(sc_dev_ctx_t *ctx, int v, int write) {
  if (write)
    atomicExch(ctx->share, v);
  __syncthreads();
  int r = *(volatile int *)ctx->share;
  __syncthreads();
  return r;
}

/* Some thread's non-zero v: every thread that has one writes it. */
SC_DEV_FN int sc_dev_any(sc_dev_ctx_t *ctx, int v) {
  if (!__syncthreads_or(v != 0))
    return 0;
  return sc_cuda_share_written(ctx, v, v != 0);
}

/* As sc_dev_any, but a thread whose v is weak writes it only where no
 * thread has another non-zero v; the second vote costs nothing when every v
 * is 0. */
SC_DEV_FN int sc_dev_any_but(sc_dev_ctx_t *ctx, int v, int weak) {
  if (!__syncthreads_or(v != 0))
    return 0;
  int strong = __syncthreads_or(v != 0 && v != weak);
  return sc_cuda_share_written(ctx, v, v != 0 && (v != weak || !strong));
}

/* GPUs poll: nobody sleeps on a bell, so ringing would only cost a remote
 * atomic per signal. */
SC_DEV_FN uint32_t sc_dev_bell_read(sc_doorbell_t *bell) { return 0; }
SC_DEV_FN void sc_dev_ring(sc_doorbell_t *bell) {}

/* ---- bulk data: every thread of the block together */

/* Words a thread copies per turn in a large copy, all loaded before any is
 * stored: the sources are mostly other GPUs' memory, so many loads must be
 * in flight. */
#ifndef SC_CUDA_COPY_UNROLL
#define SC_CUDA_COPY_UNROLL 4
#endif

/* n bytes from s to d, which do not overlap, by threads t of nt: in words of
 * W bytes (type T) where d and s are equally far past a W-byte boundary; the
 * bytes before d's first boundary and after the last whole word one per
 * thread, the words U per thread per turn (word i + u x nt on thread i % nt). */
#define SC_CUDA_COPY_LOOP(W, T, U)                                                                 \
  do {                                                                                             \
    size_t head_ = (size_t)((W - ((uintptr_t)d & (W - 1))) & (W - 1));                             \
    if (head_ > n)                                                                                 \
      head_ = n;                                                                                   \
    for (size_t i_ = t; i_ < head_; i_ += nt)                                                      \
      d[i_] = s[i_];                                                                               \
    size_t words_ = (n - head_) / W;                                                               \
    T *dw_ = (T *)(d + head_);                                                                     \
    const T *sw_ = (const T *)(s + head_);                                                         \
    for (size_t i_ = t; i_ < words_; i_ += (U) * nt) {                                             \
      T w_[U];                                                                                     \
      _Pragma("unroll") for (int u_ = 0; u_ < (U); u_++) {                                         \
        if (i_ + u_ * nt < words_)                                                                 \
          w_[u_] = sw_[i_ + u_ * nt];                                                              \
      }                                                                                            \
      _Pragma("unroll") for (int u_ = 0; u_ < (U); u_++) {                                         \
        if (i_ + u_ * nt < words_)                                                                 \
          dw_[i_ + u_ * nt] = w_[u_];                                                              \
      }                                                                                            \
    }                                                                                              \
    for (size_t i_ = head_ + words_ * W + t; i_ < n; i_ += nt)                                     \
      d[i_] = s[i_];                                                                               \
  } while (0)

/* The widest words d and s allow. */
#define SC_CUDA_COPY_WORDS(U)                                                                      \
  do {                                                                                             \
    uintptr_t apart_ = (uintptr_t)d ^ (uintptr_t)s;                                                \
    if ((apart_ & 15) == 0)                                                                        \
      SC_CUDA_COPY_LOOP(16, uint4, U);                                                             \
    else if ((apart_ & 7) == 0)                                                                    \
      SC_CUDA_COPY_LOOP(8, uint64_t, U);                                                           \
    else if ((apart_ & 3) == 0)                                                                    \
      SC_CUDA_COPY_LOOP(4, uint32_t, U);                                                           \
    else                                                                                           \
      for (size_t i_ = t; i_ < n; i_ += nt)                                                        \
        d[i_] = s[i_];                                                                             \
  } while (0)

/* A copy of more than a word per thread. A function of its own, called: the
 * unrolled loops, inlined wherever a program copies, would take registers
 * from the whole kernel (which then spills, as ptxas caps it). */
static __device__ __noinline__ void sc_cuda_copy_bulk(char *d, const char *s, size_t n) {
  size_t t = threadIdx.x, nt = blockDim.x;
  SC_CUDA_COPY_WORDS(SC_CUDA_COPY_UNROLL);
}

SC_DEV_FN void sc_dev_copy(sc_dev_ctx_t *ctx, void *dst, const void *src, size_t n) {
  char *d = (char *)dst;
  const char *s = (const char *)src;
  if (n == 0 || d == s)
    return;
  size_t t = threadIdx.x, nt = blockDim.x;
  if ((d > s && d < s + n) || (s > d && s < d + n)) {
    /* Overlapping (memmove): one thread, in the safe direction. */
    if (t == 0) {
      if (d < s)
        for (size_t i = 0; i < n; i++)
          d[i] = s[i];
      else
        for (size_t i = n; i-- > 0;)
          d[i] = s[i];
    }
    return;
  }
  /* A word per thread at most: one pass, not worth a call. */
  if (n > 16 * nt)
    sc_cuda_copy_bulk(d, s, n);
  else
    SC_CUDA_COPY_WORDS(1);
}

/* ---- guards, stops and the clock */

/* Whether the guard's communicator stopped; if so, why goes into the error
 * record (the status block's fields are written before its stop word). */
SC_DEV_FN int sc_cuda_stopped(const sc_dev_ctx_t *ctx) {
  const sc_dev_status_t *st = ctx->guard.status;
  if (st == 0)
    return 0;
  uint32_t stop = sc_dev_load32(&st->stop);
  if (stop == SC_STOP_NONE)
    return 0;
  ctx->err->stop = (int32_t)stop;
  ctx->err->stop_rank = st->rank;
  ctx->err->stop_result = st->result;
  ctx->err->why = st->why;
  return 1;
}

SC_DEV_FN int sc_dev_stopped(sc_dev_ctx_t *ctx) { return sc_cuda_stopped(ctx) ? SC_DEV_ABORTED : 0; }

SC_DEV_FN uint64_t sc_dev_departed(sc_dev_ctx_t *ctx) {
  const sc_dev_status_t *st = ctx->guard.status;
  uint64_t departed = st != 0 ? sc_dev_load(&st->departed) : 0;
  ctx->departed_seen |= departed;
  return departed;
}

SC_DEV_FN void sc_dev_enter(sc_dev_ctx_t *ctx, const sc_guard_t *guard) {
  ctx->guard = *guard;
  ctx->departed_seen = 0;
  ctx->polls = 0;
  ctx->last_progress_ns = sc_cuda_now_ns();
  if (threadIdx.x != 0)
    return;
  ctx->err->call = guard->call;
  ctx->err->seq = guard->seq;
}

SC_DEV_FN int sc_dev_begin(sc_dev_ctx_t *ctx, const sc_guard_t *guard) {
  sc_dev_enter(ctx, guard);
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return 0; /* see sc_cuda_read_stop_early */
  if (guard->status != 0 && guard->status == ctx->early_status && ctx->early_stop == SC_STOP_NONE)
    return 0;
  return sc_cuda_stopped(ctx) ? SC_DEV_ABORTED : 0;
}

SC_DEV_FN void sc_dev_progress(sc_dev_ctx_t *ctx) { ctx->last_progress_ns = sc_cuda_now_ns(); }

/* Programmatic dependent launch (Hopper): a kernel launched with the
 * programmatic stream serialization attribute (cuda_launch.c) may start
 * once every block of the kernel ahead of it ran launch_dependents (or
 * ended); its wait returns when that kernel has ended and its writes are
 * visible. Both do nothing in a kernel launched without the attribute. */
SC_DEV_FN void sc_dev_start_next(sc_dev_ctx_t *ctx) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
SC_DEV_FN void sc_dev_wait_previous(sc_dev_ctx_t *ctx) { asm volatile("griddepcontrol.wait;" ::: "memory"); }

SC_DEV_FN int sc_dev_sleep(sc_dev_ctx_t *ctx, sc_doorbell_t *bell, uint32_t seen) {
  if (++ctx->polls >= SC_CUDA_POLLS_PER_CHECK) {
    ctx->polls = 0;
    if (sc_cuda_stopped(ctx))
      return SC_DEV_ABORTED;
    const sc_dev_status_t *st = ctx->guard.status;
    if (st != 0 && (sc_dev_load(&st->departed) & ~ctx->departed_seen) != 0)
      return SC_DEV_PEER_LEFT; /* the program looks with sc_dev_departed */
    if (ctx->guard.timeout_ms >= 0 &&
        sc_cuda_now_ns() - ctx->last_progress_ns >= (uint64_t)ctx->guard.timeout_ms * 1000000u)
      return SC_DEV_TIMEOUT;
  }
  __nanosleep(SC_CUDA_NAP_NS);
  return 0;
}

/* sc_dev_reduce, with 16-byte vectors where the pointers allow; after the
 * runtime, whose functions it uses. */
#include "backend/cuda/cuda_reduce.cuh"

#endif
