/* What a backend gives device programs. A backend defines these before it
 * includes any program header (every device header but program.h):
 *
 *   typedef ... sc_dev_ctx_t;     the state of one launch (its guard, its
 *                                 progress clock, where its error goes)
 *
 *   uint64_t sc_dev_load(const uint64_t *p);         acquire load
 *   void sc_dev_store(uint64_t *p, uint64_t v);      release store
 *   void sc_dev_add(uint64_t *p, uint64_t v);        release atomic add
 *   void sc_dev_or(uint64_t *p, uint64_t v);         release atomic or
 *   uint32_t sc_dev_load32(const uint32_t *p);       acquire load (status words)
 *   void sc_dev_store32(uint32_t *p, uint32_t v);    release store
 *   int sc_dev_cas32(uint32_t *p, uint32_t expected, uint32_t v);
 *                                                    compare and swap; 1 if it swapped
 *   uint32_t sc_dev_bell_read(sc_doorbell_t *bell);  acquire load of the bell
 *   void sc_dev_ring(sc_doorbell_t *bell);           after stores others wait for
 *   void sc_dev_copy(sc_dev_ctx_t *ctx, void *dst, const void *src, size_t n);
 *   int sc_dev_begin(sc_dev_ctx_t *ctx, const sc_guard_t *guard);
 *       takes the program's guard, starts the clock and notes in the error
 *       record what the launch belongs to (guard call and seq); returns
 *       SC_DEV_ABORTED (the stop noted in the error record) when the
 *       communicator has already stopped, else 0
 *   int sc_dev_stopped(sc_dev_ctx_t *ctx);
 *       SC_DEV_ABORTED (the stop noted in the error record) when the guard's
 *       communicator has stopped, else 0; does not wait
 *   void sc_dev_progress(sc_dev_ctx_t *ctx);         restarts the no-progress clock
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

#endif
