/* What a backend gives device programs. A backend defines these before it
 * includes any program header (every device header but program.h):
 *
 *   typedef ... sc_dev_ctx_t;     the state of one block of a launch (its
 *                                 guard, its progress clock, where its error
 *                                 goes, its block index)
 *
 * Blocks and threads (backend.h's sc_launch_t): a launch runs `blocks`
 * blocks; a block may be many threads (CUDA) or one (the simulated backend).
 * Every thread of a block runs the program; protocol steps (flags, signals,
 * waits) are done by the leader alone, bulk data by all threads together.
 *
 *   uint32_t sc_dev_block(const sc_dev_ctx_t *ctx);  this block's index
 *   uint32_t sc_dev_blocks(const sc_dev_ctx_t *ctx); blocks in the launch
 *   uint32_t sc_dev_thread(const sc_dev_ctx_t *ctx); this thread's index in the block
 *   uint32_t sc_dev_threads(const sc_dev_ctx_t *ctx); threads in the block (bulk
 *       loops stride by it: element i on thread i % threads)
 *   int sc_dev_leader(const sc_dev_ctx_t *ctx);      1 on one thread of the block
 *   void sc_dev_sync(sc_dev_ctx_t *ctx);             every thread of the block
 *       arrives before any goes on (memory of the block's threads visible)
 *   int sc_dev_share(sc_dev_ctx_t *ctx, int v);      the leader's v, on every
 *       thread (a block-wide sync): how a wait's outcome reaches the block
 *
 * Memory order: the flag operations below act at system scope (other GPUs
 * and the host see them); a release orders every earlier write of the
 * block that the block synced before it (sc_dev_sync first, then the
 * leader's release).
 *
 *   uint64_t sc_dev_load(const uint64_t *p);         acquire load
 *   void sc_dev_store(uint64_t *p, uint64_t v);      release store
 *   void sc_dev_add(uint64_t *p, uint64_t v);        release atomic add
 *   void sc_dev_or(uint64_t *p, uint64_t v);         release atomic or
 *   uint32_t sc_dev_load32(const uint32_t *p);       acquire load (status words)
 *   uint32_t sc_dev_load_poll32(const uint32_t *p);  relaxed load, the same
 *   void sc_dev_store32(uint32_t *p, uint32_t v);    release store
 *   int sc_dev_cas32(uint32_t *p, uint32_t expected, uint32_t v);
 *                                                    compare and swap; 1 if it swapped
 *   uint32_t sc_dev_count_own32(uint32_t *p);        atomic increment among the
 *       blocks of one launch (acq_rel, this GPU only): the value before it
 *   uint32_t sc_dev_count_down_own32(uint32_t *p);   atomic decrement, the same
 *   uint32_t sc_dev_ticket_own32(uint32_t *p);       atomic increment among this
 *       GPU's blocks with no order to anything else (a number to take: what
 *       it guards is ordered by the taker's later acquire): the value before it
 *   void sc_dev_skip_own32(uint32_t *p);             the same, not waiting for
 *       the value (what the launch's end orders is enough)
 *   uint64_t sc_dev_load_poll(const uint64_t *p);    a load in a polling loop:
 *       relaxed (several can be in flight); after the loop,
 *   void sc_dev_acquire(void);                       makes what the writers of
 *       the words polled released visible (a fence at system scope)
 *   void sc_dev_store_relaxed(uint64_t *p, uint64_t v); at system scope, with
 *       no order but that of the same thread's later release
 *   uint64_t sc_dev_load_own(const uint64_t *p);     relaxed load of this rank's
 *       own counters (device memory that only this rank's launches write;
 *       what earlier launches wrote is visible)
 *   void sc_dev_store_own(uint64_t *p, uint64_t v);  relaxed store, the same
 *   uint64_t sc_dev_load_own_acquire(const uint64_t *p);
 *   void sc_dev_store_own_release(uint64_t *p, uint64_t v);
 *       acquire load and release store of words only this GPU's blocks
 *       write and read (this GPU's scope: cheaper than the flags' system
 *       scope)
 *   uint64_t sc_dev_load_own_poll(const uint64_t *p);
 *   void sc_dev_acquire_own(void);
 *       several such acquire loads at once: relaxed loads (all in flight),
 *       then the fence that makes them acquires (at this GPU's scope). The
 *       fence makes acquires of sc_dev_load_own_poll's loads only (the
 *       simulated backend's is nothing: its polls are acquire loads)
 *   void sc_dev_ll_store(uint64_t *line, uint64_t w0, uint64_t w1);
 *   void sc_dev_ll_load(const uint64_t *line, uint64_t *w0, uint64_t *w1);
 *       a 16-byte line of the LL protocol (device/coll_ll.h): each of the two
 *       words is written and read whole (single-copy atomic), with no order
 *       to anything else: a word carries its data and the flag that says the
 *       data is there
 *   int sc_dev_any(sc_dev_ctx_t *ctx, int v);        block-wide (every thread
 *       calls it): the non-zero v of some thread, or 0 when every v is 0
 *   int sc_dev_any_but(sc_dev_ctx_t *ctx, int v, int weak);   the same, but
 *       weak only where no thread has another non-zero v (a second vote,
 *       taken only when some v is non-zero)
 *   SC_DEV_QUICK_POLLS  how many times a leader (or a block) may look again
 *       at once at what it waits for before going back to the program's wait (0
 *       where waits sleep: the simulated backend spins nowhere else)
 *   uint32_t sc_dev_bell_read(sc_doorbell_t *bell);  acquire load of the bell
 *   void sc_dev_ring(sc_doorbell_t *bell);           after stores others wait for
 *   void sc_dev_copy(sc_dev_ctx_t *ctx, void *dst, const void *src, size_t n);
 *       called by every thread of the block together; they share the work
 *   int sc_dev_begin(sc_dev_ctx_t *ctx, const sc_guard_t *guard);
 *       called by every thread: takes the program's guard, starts the clock
 *       and notes in the error record what the launch belongs to (guard call
 *       and seq); returns, on the leader, SC_DEV_ABORTED (the stop noted in
 *       the error record) when the communicator has already stopped, else 0;
 *       other threads get 0 (the stop word is host memory, one read per
 *       block: the leader shares what it found). A backend may look only in
 *       block 0 (CUDA: host reads from many blocks queue): the others learn
 *       of a stop from their waits' checks or the marks it leaves
 *   void sc_dev_enter(sc_dev_ctx_t *ctx, const sc_guard_t *guard);
 *       sc_dev_begin without its look at the stop word, for a program that
 *       learns of a stop otherwise (the collectives and send/recv: a copy
 *       of the word in device memory, then sc_dev_stopped for its details)
 *   void sc_dev_start_next(sc_dev_ctx_t *ctx);
 *   void sc_dev_wait_previous(sc_dev_ctx_t *ctx);
 *       for a kernel launched to start before the one ahead of it on its
 *       stream has ended (CUDA: programmatic dependent launch): the program
 *       reads nothing that earlier work on the stream writes before
 *       sc_dev_wait_previous (what never changes after its communicator's
 *       setup, such as the collective descriptor, it may); sc_dev_start_next
 *       lets the next such kernel start now, to read those parts and wait.
 *       Nothing elsewhere (one launch after the other)
 *   int sc_dev_stopped(sc_dev_ctx_t *ctx);
 *       SC_DEV_ABORTED (the stop noted in the error record) when the guard's
 *       communicator has stopped, else 0; does not wait
 *   void sc_dev_progress(sc_dev_ctx_t *ctx);         restarts the no-progress clock
 *   void sc_dev_publish_early(sc_dev_ctx_t *ctx, const sc_dev_error_t *err);
 *       the leader, before the mark that tells the others of a failure that
 *       starts here: where blocks of a launch run at once (CUDA), the
 *       failure is recorded before another block (or another stream's
 *       launch waiting on the same pair) can hear of it and record the echo
 *       first; nothing where they run one after another
 *   int sc_dev_sleep(sc_dev_ctx_t *ctx, sc_doorbell_t *bell, uint32_t seen);
 *       until the bell differs from `seen` (or a spurious wake): 0; when the
 *       guard's communicator stopped (its status block's stop word):
 *       SC_DEV_ABORTED, with the stop's rank and sentence noted in the error
 *       record; when no progress was made for the guard's timeout:
 *       SC_DEV_TIMEOUT; when the bell's memory is gone: SC_DEV_BAD_ARGS;
 *       when the status block names a departed rank that this launch's
 *       sc_dev_departed has not returned yet: SC_DEV_PEER_LEFT (checked
 *       with the stop word, not on every poll).
 *   uint64_t sc_dev_departed(sc_dev_ctx_t *ctx);
 *       the status block's departed ranks (acquire: what they did before
 *       leaving is visible), remembered so that sleeps report only newer ones
 *       On the host backend it polls for the guard's spin_us at most
 *       (SYMCOMM_SPIN_US), yields a few times, then sleeps on a futex.
 *
 *   void sc_dev_test_point(int where);
 *       a point between two steps of a protocol (SC_TEST_POINT_*) where a
 *       test of the simulated backend may act, deterministically, as a peer
 *       whose stores land just then would (sc_host_test_point); nothing on
 *       GPUs
 *
 * Programs follow one pattern for every wait: read the bell, check the
 * condition, and sleep on the bell only if it does not hold yet; a ring
 * between the check and the sleep makes the sleep return at once. A sleep
 * that returns SC_DEV_PEER_LEFT is followed by sc_dev_departed and one more
 * check of the condition: only a wait that still needs a departed rank
 * fails. */
#ifndef SC_DEVICE_RUNTIME_H
#define SC_DEVICE_RUNTIME_H

#include "device/program.h"

#ifdef __CUDACC__
#define SC_DEV_FN static __device__ __forceinline__
#else
#define SC_DEV_FN static inline
#endif

/* sc_dev_test_point's points. */
enum {
  /* An eager receive looked at its slot and did not find its message whole;
   * it is about to load the pair's failure mark (device/p2p.h). */
  SC_TEST_POINT_EAGER_MARK = 1
};

/* Before a loop with a constant trip count that the GPU compiler must
 * unroll: an array indexed only by such loops' counters then lives in
 * registers, where any other index would put it on the stack, which is cold
 * memory when a kernel starts (device/coll_ll.h). */
#ifdef __CUDACC__
#define SC_DEV_UNROLL _Pragma("unroll")
#else
#define SC_DEV_UNROLL
#endif

#endif
