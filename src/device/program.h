/* Device programs: the steps of symcomm's protocols that run on the device,
 * one launch each, written once in portable C (this folder) and run by every
 * backend: a stream's worker thread on the simulated backend, a kernel on
 * CUDA. Their arguments are plain structs of pointers into memory the device
 * can reach (MSCCL++'s host/device split), copied at launch.
 *
 * A program that fails fills an sc_dev_error_t; the host turns it into the
 * stream's error sentence with sc_dev_error_describe(). */
#ifndef SC_DEVICE_PROGRAM_H
#define SC_DEVICE_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "util/rank_limit.h"

typedef enum sc_program {
  SC_PROGRAM_SIGNAL = 0, /* sc_signal_args_t */
  SC_PROGRAM_WAIT = 1,   /* sc_wait_args_t */
  SC_PROGRAM_REDUCE = 2, /* sc_reduce_args_t */
  SC_PROGRAM_P2P = 3,    /* sc_p2p_args_t: a batch of sends and receives (device/p2p.h) */
  SC_PROGRAM_BARRIER = 4, /* sc_barrier_args_t */
  SC_PROGRAM_COPIES = 5,  /* sc_copies_args_t */
  SC_PROGRAM_COUNT
} sc_program_t;

/* Where waits sleep: one per signal pad. A program that changes a slot others
 * may wait on rings the bell of the pad holding it; a waiter sleeps until the
 * bell changes (a futex on the simulated backend; ignored on GPUs, which poll). */
typedef struct sc_doorbell {
  uint32_t rings;
  uint32_t sleepers;     /* simulated backend: waiters in the futex, so rings can skip the wake */
  uint32_t reserved[14]; /* a cache line of its own */
} sc_doorbell_t;

/* What bounds a program's waits: the communicator's abort word (nonzero =
 * stop) and the longest it may go without progress. */
typedef struct sc_guard {
  const volatile uint32_t *abort_word;
  int64_t timeout_ms; /* < 0: no limit */
  uint32_t spin_us;   /* simulated backend: poll this long before giving the CPU away
                         (SYMCOMM_SPIN_US; GPUs poll anyway) */
} sc_guard_t;

/* A communicator's windows as programs see them: entry `id` of a table the
 * communicator owns (windows are collective, so ids agree on every rank). A
 * free entry has bytes == 0. */
typedef struct sc_dev_window {
  void **peer;    /* [nranks] each rank's buffer as mapped here; NULL off this host */
  uint64_t bytes;
} sc_dev_window_t;

#define SC_MAX_WINDOWS 1024 /* per communicator with an id; later ones have none */

/* Counters use the top bit to say "this exchange failed"; the rest counts. */
#define SC_SLOT_ERROR (1ull << 63)

enum { SC_SIGNAL_OP_SET = 0, SC_SIGNAL_OP_ADD = 1 }; /* = symcomm_signal_op_t */
enum { SC_CMP_OP_GE = 0, SC_CMP_OP_EQ = 1 };        /* = symcomm_cmp_t */

typedef struct sc_signal_args {
  uint64_t *slot;
  uint64_t value;
  int op;              /* SC_SIGNAL_OP_* */
  sc_doorbell_t *bell; /* of the pad holding slot */
} sc_signal_args_t;

typedef struct sc_wait_args {
  const uint64_t *slot;
  uint64_t value;
  int cmp;             /* SC_CMP_OP_* */
  sc_doorbell_t *bell; /* of the pad holding slot */
  sc_guard_t guard;
} sc_wait_args_t;

/* dst[i] = op over srcs[0..nsrcs)[i], for i < count; dst may be one of srcs,
 * which are at most the ranks of one host (so fp16/bf16 accumulate once in float).
 * dtype and op are symcomm_dtype_t and symcomm_op_t; AVG divides by
 * avg_divisor (the number of ranks), integers truncating toward zero. */
typedef struct sc_reduce_args {
  void *dst;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  int nsrcs;
  size_t count;
  int dtype;
  int op;
  int avg_divisor;
} sc_reduce_args_t;

/* Every rank adds 1 to slot[r] of every rank r (its own included) and rings
 * bell[r]; then it waits until its own slot reaches `target` (= barriers so
 * far x n: the counters only grow). Optionally it also publishes `value` in
 * its own tag slot and checks, once everyone has arrived, that every rank
 * published the same (tags[r] == value for all r): ranks that disagree fail
 * with SC_DEV_DISAGREE. */
typedef struct sc_barrier_args {
  uint64_t *slot[SC_MAX_LOCAL_RANKS];
  sc_doorbell_t *bell[SC_MAX_LOCAL_RANKS];
  uint64_t *tag[SC_MAX_LOCAL_RANKS]; /* NULL: no check */
  int n;
  int me;
  uint64_t target;
  uint64_t value;
  sc_guard_t guard;
} sc_barrier_args_t;

/* Several copies in one launch: dst[i] <- src[i], bytes[i] each; as many as a
 * host has ranks (one per peer), more take several launches. */
typedef struct sc_copies_args {
  void *dst[SC_MAX_LOCAL_RANKS];
  const void *src[SC_MAX_LOCAL_RANKS];
  uint64_t bytes[SC_MAX_LOCAL_RANKS];
  int n;
} sc_copies_args_t;

/* ---- errors */

typedef enum sc_dev_error_kind {
  SC_DEV_OK = 0,
  SC_DEV_ABORTED,       /* the abort word was set */
  SC_DEV_TIMEOUT,       /* a = slot value seen, b = value awaited, c = timeout ms */
  SC_DEV_P2P_TIMEOUT,   /* a = peer, b = message number, c = bytes, d = 0 send / 1 recv, e = timeout ms */
  SC_DEV_SIZE_MISMATCH, /* a = peer, b = bytes here, c = bytes there, d = 0 send / 1 recv */
  SC_DEV_PEER_FAILED,   /* a = peer: it stopped this exchange after an earlier error */
  SC_DEV_BAD_ARGS,      /* a = program: arguments a program cannot run with */
  SC_DEV_DISAGREE       /* a = rank, b = its value, c = this rank's value: ranks called different things */
} sc_dev_error_kind_t;

typedef struct sc_dev_error {
  int32_t kind; /* sc_dev_error_kind_t */
  int32_t reserved;
  int64_t a, b, c, d, e;
} sc_dev_error_t;

/* The sentence for a program's error (host code). */
void sc_dev_error_describe(const sc_dev_error_t *err, char *buf, size_t len);

#endif
