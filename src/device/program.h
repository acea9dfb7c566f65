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
  SC_PROGRAM_P2P = 3,    /* sc_p2p_args_t: a batch of sends and receives (device/p2p.h) */
  SC_PROGRAM_COLL = 6,   /* sc_coll_args_t: a whole collective (device/coll.h) */
  SC_PROGRAM_NET = 7,    /* sc_net_args_t: sends and receives with other hosts (device/net.h) */
  SC_PROGRAM_REDUCE = 8, /* sc_reduce_args_t: dst = sources combined (device/reduce_program.h) */
  SC_PROGRAM_COUNT
} sc_program_t;

/* Where waits sleep: one per signal pad. A program that changes a slot others
 * may wait on rings the bell of the pad holding it; a waiter sleeps until the
 * bell changes (a futex on the simulated backend; ignored on GPUs, which poll). */
typedef struct sc_doorbell {
  uint32_t rings;
  uint32_t sleepers;     /* simulated backend: waiters in the futex, so rings can skip the wake */
  int32_t notify_fd;     /* simulated backend: an eventfd a ring also writes (a host thread that
                            waits in poll() for it); 0: none */
  uint32_t reserved[13]; /* a cache line of its own */
} sc_doorbell_t;

/* Why a communicator stopped: the value of its status block's stop word. */
typedef enum sc_stop {
  SC_STOP_NONE = 0,
  SC_STOP_ABORTED,        /* symcomm_comm_abort on this rank */
  SC_STOP_FAILED_HERE,    /* a program of this rank failed on its own (a timeout): `why` */
  SC_STOP_PEER_EXITED,    /* rank `rank` exited or was killed (its connections dropped) */
  SC_STOP_PEER_ABORTED,   /* rank `rank` called symcomm_comm_abort */
  SC_STOP_PEER_FAILED,    /* rank `rank` failed: `why` is its sentence */
  SC_STOP_ROOT_LOST,      /* the root went away, and no rank of the communicator served it */
  SC_STOP_SESSION_FAILED  /* the job failed in another way (the root's sentence in `why`) */
} sc_stop_t;

/* What a launch belongs to, for the sentence of its failure. */
typedef enum sc_call {
  SC_CALL_NONE = 0,
  SC_CALL_COLL = 1,        /* a collective: SC_CALL_COLL + its kind (sc_coll_kind_t), 6 of them */
  SC_CALL_P2P = 8,         /* sends and receives: the op that failed says which */
  SC_CALL_WAIT_SIGNAL = 9, /* symcomm_wait_signal */
  SC_CALL_NET = 10         /* sends and receives with other hosts: the op that failed says which */
} sc_call_t;

/* What bounds a program's waits: its communicator's status block (stop =
 * give up) and the longest it may go without progress; and what the launch
 * belongs to, for the sentence when it gives up. */
typedef struct sc_guard {
  struct sc_dev_status *status; /* NULL: nothing stops it but the timeout */
  int64_t timeout_ms;      /* < 0: no limit */
  uint32_t spin_us;        /* simulated backend: poll this long before giving the CPU away
                              (SYMCOMM_SPIN_US; GPUs poll anyway) */
  int32_t call;            /* sc_call_t */
  uint64_t seq;            /* a collective's number on its communicator (from 0) */
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

/* ---- collectives (device/coll.h): one launch of SC_PROGRAM_COLL runs a
 * whole collective, its rounds, barriers, copies and reductions.
 *
 * Each block of the launch handles its own slice of every chunk and meets
 * only the block of the same index on the other ranks. What changes from call
 * to call (barrier epochs, the call's number) lives in device memory and is
 * advanced by the program, so that the same arguments can be launched again
 * and again (a CUDA graph's replay). */

#define SC_COLL_MAX_BLOCKS 128

typedef enum sc_coll_kind {
  SC_COLL_ALLREDUCE = 0,
  SC_COLL_REDUCE,
  SC_COLL_BROADCAST,
  SC_COLL_ALLGATHER,
  SC_COLL_REDUCESCATTER,
  SC_COLL_ALLTOALL,
  SC_COLL_KIND_COUNT
} sc_coll_kind_t;

typedef enum sc_coll_algo {
  SC_ALGO_AUTO = 0,
  SC_ALGO_ONESHOT, /* each rank reads every peer's staged input and reduces it all */
  SC_ALGO_TWOSHOT, /* each rank reduces its share from every peer, then all gather the shares */
  SC_ALGO_DIRECT,  /* stage, then read what one needs straight from the peers */
  SC_ALGO_WINDOWS, /* two-shot straight on buffers that are windows: nothing staged */
  SC_ALGO_LL,      /* small calls: each rank pushes its input, flagged, to the peers that need it */
  SC_ALGO_SPLIT    /* broadcast and reduce: the root's data moves in one part per other rank,
                      which those ranks then gather (broadcast) or hand to the root (reduce) */
} sc_coll_algo_t;

/* The paths of the COLL program, one bit each. A kernel built for some of
 * them (device/coll.h's sc_dev_coll_run_on, with a constant) holds only
 * their code: a small call's path is then not slowed by the registers and
 * stack that the largest paths need. */
#define SC_COLL_PATH_WINDOWS (1u << 0)
#define SC_COLL_PATH_LL (1u << 1)
#define SC_COLL_PATH_SPLIT (1u << 2)
#define SC_COLL_PATH_ONESHOT (1u << 3) /* all-reduce one-shot, reduce */
#define SC_COLL_PATH_TWOSHOT (1u << 4)
#define SC_COLL_PATH_BROADCAST (1u << 5)
#define SC_COLL_PATH_DIRECT (1u << 6) /* all-gather, reduce-scatter, all-to-all */
#define SC_COLL_PATH_COUNT 7

/* For the host (which launches the path's kernel) and the device alike. */
#ifdef __CUDACC__
#define SC_PROGRAM_FN static __host__ __device__ __forceinline__
#else
#define SC_PROGRAM_FN static inline
#endif

/* The path of a call of this algorithm (sc_coll_algo_t) and kind
 * (sc_coll_kind_t). */
SC_PROGRAM_FN uint32_t sc_coll_path(int32_t algo, int32_t kind) {
  if (algo == SC_ALGO_WINDOWS)
    return SC_COLL_PATH_WINDOWS;
  if (algo == SC_ALGO_LL)
    return SC_COLL_PATH_LL;
  if (algo == SC_ALGO_SPLIT)
    return SC_COLL_PATH_SPLIT;
  if (kind == SC_COLL_ALLREDUCE)
    return algo == SC_ALGO_TWOSHOT ? SC_COLL_PATH_TWOSHOT : SC_COLL_PATH_ONESHOT;
  if (kind == SC_COLL_REDUCE)
    return SC_COLL_PATH_ONESHOT;
  return kind == SC_COLL_BROADCAST ? SC_COLL_PATH_BROADCAST : SC_COLL_PATH_DIRECT;
}

/* Direct's rounds copy what the peers pushed out of the inboxes: from L2
 * while a round's inboxes fit there (50 MB on an H200). 4 H200s, all-gather
 * of 512 MiB: 1431 us with 8 MiB inboxes, 1738 with 32 MiB. */
#define SC_COLL_DIRECT_INBOX_MAX ((uint64_t)8 << 20)

/* The paths that push (device/coll.h): each rank stores what a peer needs
 * into that peer's scratch, in an inbox per source rank, before the round's
 * barrier. Bytes of one inbox (a multiple of 64): two-shot's are in the
 * staging area (a share of a chunk each; the result area takes the reduced
 * shares), one-shot's and direct's fill the whole half (staging and result
 * areas: a chunk each). 0 for the paths that do not push. */
SC_PROGRAM_FN uint64_t sc_coll_inbox_bytes(uint64_t area, int32_t nranks, uint32_t path) {
  if (nranks < 1)
    return 0;
  if (path == SC_COLL_PATH_TWOSHOT)
    return area / (uint64_t)nranks / 64 * 64;
  uint64_t whole = 2 * area / (uint64_t)nranks / 64 * 64;
  if (path == SC_COLL_PATH_DIRECT && whole > SC_COLL_DIRECT_INBOX_MAX)
    return SC_COLL_DIRECT_INBOX_MAX;
  if (path == SC_COLL_PATH_ONESHOT || path == SC_COLL_PATH_DIRECT)
    return whole;
  return 0;
}

/* Elements a round of a call moves at most (sc_coll_args_t's per) for a
 * scratch of `area`-byte areas: what the path's inboxes hold, or one area
 * (broadcast and split stage the root's chunk; windows have no rounds). A
 * two-shot chunk is a whole number of inboxes, so its shares fill them. */
SC_PROGRAM_FN uint64_t sc_coll_per_max(uint64_t area, int32_t nranks, uint32_t path,
                                       uint32_t elem) {
  uint64_t inbox = sc_coll_inbox_bytes(area, nranks, path);
  if (elem == 0)
    return 0;
  if (path == SC_COLL_PATH_TWOSHOT)
    return inbox / elem * (uint64_t)nranks;
  if (path == SC_COLL_PATH_ONESHOT || path == SC_COLL_PATH_DIRECT)
    return inbox / elem;
  return area / elem;
}

/* The number of a path's bit: which of the CUDA backend's COLL kernels runs
 * the call (cuda_programs.c), and the one path the simulated backend lets a
 * call run on, so that this choice is exercised without a GPU. */
SC_PROGRAM_FN int sc_coll_path_index(uint32_t path) {
  int v = 0;
  while (v < SC_COLL_PATH_COUNT - 1 && (path >> v & 1) == 0)
    v++;
  return v;
}

/* The LL protocol (device/coll_ll.h). A line is 16 bytes: two words of 4
 * data bytes and the call's 4-byte flag. Each rank's LL region (after its
 * sync block in the scratch window) has two halves (calls alternate) of a
 * part per source rank: SC_COLL_MAX_BLOCKS tag lines, then the data lines. */
#define SC_LL_LINE_BYTES 16
#define SC_LL_LINE_DATA 8
#define SC_LL_MAX_RANKS 8

/* Where the ranks of a communicator meet for its collectives: one per rank, at
 * the end of its scratch window, mapped by every rank of the host. Every word
 * has a single writer (no two ranks ever write one word), and only grows. */
typedef struct sc_coll_sync {
  sc_doorbell_t bell; /* rung by every write below */
  /* fail[s]: rank s's mark once it gave up on the collectives
   * (device/status.h's relay mark), written by rank s only; 0 before */
  uint64_t fail[SC_MAX_LOCAL_RANKS];
  /* arrive[b][s]: the last barrier epoch that block b of rank s reached,
   * written by that block only */
  uint64_t arrive[SC_COLL_MAX_BLOCKS][SC_MAX_LOCAL_RANKS];
  /* tag[b][s][e % 2]: the tag of the call block b of rank s runs, written by
   * that block before its arrival at the call's first barrier (epoch e);
   * read here once every rank arrived. Rank s writes the slot again at its
   * epoch e + 2 at the earliest, after every rank passed e + 1, done
   * reading. */
  uint64_t tag[SC_COLL_MAX_BLOCKS][SC_MAX_LOCAL_RANKS][2];
} sc_coll_sync_t;

/* Device memory of this rank (dev_alloc), advanced by the program. */
typedef struct sc_coll_block_state {
  uint64_t epoch;       /* barriers this block index has passed on the communicator */
  uint64_t reserved[7]; /* a cache line each */
} sc_coll_block_state_t;

typedef struct sc_coll_state {
  sc_coll_block_state_t block[SC_COLL_MAX_BLOCKS];
  uint64_t calls;  /* collectives run so far: the number in error sentences */
  uint64_t rounds; /* rounds they ran: which half of the scratch the next uses */
  uint64_t broken; /* 1 + the number of a collective that failed here; 0 while none did */
  uint32_t exits;  /* blocks of the running launch that have finished */
  uint32_t reserved;
} sc_coll_state_t;

/* A communicator's collective descriptor, in device memory (dev_alloc,
 * uploaded once when the communicator is made). */
typedef struct sc_coll_desc {
  int32_t nranks, me;
  uint64_t area;                         /* bytes of one staging or result area */
  char *scratch[SC_MAX_LOCAL_RANKS];     /* each rank's scratch as mapped here: two halves of a
                                            staging area and a result area each */
  sc_coll_sync_t *sync[SC_MAX_LOCAL_RANKS]; /* each rank's sync block as mapped here */
  sc_coll_state_t *state;                /* this rank's counters */
  uint64_t *failed;                      /* host memory the host reads: `broken`, copied when set */
  sc_guard_t guard;                      /* status block, timeout, spin; call and seq unused */
  uint64_t *ll[SC_MAX_LOCAL_RANKS];      /* each rank's LL region as mapped here (0: no LL) */
  uint64_t ll_lines;                     /* lines of one source's part: tag lines, then data */
} sc_coll_desc_t;

/* A rank's buffers of a call straight on windows, as mapped here. */
typedef struct sc_coll_peer {
  const void *in;
  void *out;
} sc_coll_peer_t;

/* One collective. Nothing here changes from call to call for the same call:
 * launching the same arguments again runs the same collective again. */
typedef struct sc_coll_args {
  const sc_coll_desc_t *desc;
  sc_coll_state_t *state; /* desc->state: here too, so that a block reads its counters without
                             waiting for the descriptor first */
  sc_coll_sync_t *sync;   /* desc->sync[desc->me], here too for the same reason (the marks) */
  const uint32_t *stopped; /* the status block's stop word as copied to device memory when it
                              is set (0 until then): the collectives read it, not the host's */
  int32_t kind;  /* sc_coll_kind_t */
  int32_t algo;  /* sc_coll_algo_t */
  int32_t dtype; /* symcomm_dtype_t */
  int32_t op;    /* symcomm_op_t (reductions) */
  int32_t root;  /* reduce, broadcast */
  uint32_t elem; /* bytes per element: 1, 2, 4 or 8 */
  uint64_t count; /* allreduce, reduce, broadcast: elements; allgather: per rank sent;
                     reducescatter: per rank received; alltoall: per peer */
  uint64_t per;   /* elements a round moves (of each rank's block for reducescatter, alltoall) */
  const void *sendbuf;
  void *recvbuf;
  uint64_t tag;   /* what every rank must agree on: checked at the first barrier */
  uint32_t npeers; /* entries of peer that follow: the ranks for SC_ALGO_WINDOWS, else 0 */
  uint32_t reserved;
  /* SC_ALGO_WINDOWS: every rank's input and output, as mapped here. A launch
   * passes the arguments up to peer[npeers] (sc_coll_args_bytes): the rest is
   * neither copied nor read. */
  sc_coll_peer_t peer[SC_MAX_LOCAL_RANKS];
} sc_coll_args_t;

/* The bytes of a's arguments that a launch passes. */
static inline size_t sc_coll_args_bytes(const sc_coll_args_t *a) {
  return offsetof(sc_coll_args_t, peer) + (size_t)a->npeers * sizeof(sc_coll_peer_t);
}

/* ---- the REDUCE program: a step of the collectives between hosts
 * (src/coll/coll_hosts.c), which combine what send/recv brought in. */

#define SC_REDUCE_MAX_SRCS 16

typedef struct sc_reduce_args {
  void *dst;
  const void *srcs[SC_REDUCE_MAX_SRCS]; /* combined in this order; dst may be srcs[0] */
  uint64_t count;   /* elements */
  int32_t nsrcs;    /* 1..SC_REDUCE_MAX_SRCS */
  int32_t dtype;    /* symcomm_dtype_t */
  int32_t op;       /* symcomm_op_t */
  int32_t divisor;  /* AVG divides by it */
  uint32_t elem;    /* bytes per element */
  uint32_t reserved;
  sc_guard_t guard; /* nothing is waited for: whether the communicator stopped */
} sc_reduce_args_t;

/* ---- errors */

typedef enum sc_dev_error_kind {
  SC_DEV_OK = 0,
  SC_DEV_ABORTED,       /* the communicator stopped (status->stop): stop, stop_rank, why say why */
  SC_DEV_TIMEOUT,       /* a = slot value seen, b = value awaited, c = timeout ms */
  SC_DEV_P2P_TIMEOUT,   /* a = peer, b = message number, c = bytes, d = 0 send / 1 recv, e = timeout ms */
  SC_DEV_SIZE_MISMATCH, /* a = peer, b = bytes here, c = bytes there, d = 0 send / 1 recv,
                           e = 0, or an earlier eager send's number + 1: the one refused */
  SC_DEV_PEER_FAILED,   /* a = peer: it stopped this exchange after an earlier error */
  SC_DEV_BAD_ARGS,      /* a = program: arguments a program cannot run with */
  SC_DEV_DISAGREE,      /* a = rank, b = its value, c = this rank's value: ranks called different things */
  SC_DEV_BARRIER_TIMEOUT, /* a = lowest rank missing, b = ranks missing, c = timeout ms, d = barrier */
  SC_DEV_COLL_FAILED,   /* a = rank that marked the barrier failed (-1 unknown), b = the rank
                           it timed out waiting for (-1: it gave up for another reason) */
  SC_DEV_PEER_LEFT,     /* e = a rank that destroyed its communicator without taking part;
                           a send or receive: a..d as for SC_DEV_P2P_TIMEOUT (a = e, or a
                           peer that gave up waiting for e and relayed it) */
  SC_DEV_OUT_OF_STEP,   /* a = the number of an earlier collective that failed on this rank */
  SC_DEV_NET_TIMEOUT,   /* a send or receive with another host made no progress: a = peer,
                           c = bytes, d = 0 send / 1 recv, e = timeout ms */
  SC_DEV_P2P_CROSSED    /* a lane of a send or receive found its message run by another
                           launch (two launches on one pair and direction at once): a = peer,
                           b = message number, c = bytes, d = 0 send / 1 recv */
} sc_dev_error_kind_t;

typedef struct sc_dev_error {
  int32_t kind; /* sc_dev_error_kind_t */
  int32_t call; /* sc_call_t of the launch (from its guard) */
  uint64_t seq; /* ... and its number */
  int64_t a, b, c, d, e;
  /* SC_DEV_ABORTED: the communicator's stop, copied from its status block */
  int32_t stop; /* sc_stop_t */
  int32_t stop_rank;
  int32_t stop_result; /* the status block's result (symcomm_result_t; 0: none said) */
  /* SC_DEV_PEER_LEFT in a send: 1 if the peer left before taking that send
   * (an eager one, which had ended at its put), not during it */
  int32_t untaken;
  const char *why; /* the status block's sentence (host memory) */
} sc_dev_error_t;

#define SC_STATUS_WHY_BYTES 768

/* A communicator's state as its programs see it, one per communicator in
 * host memory the device maps (host_alloc). The host sets `stop` (after
 * `rank` and `why`) when the communicator fails, here or elsewhere: every
 * waiting program of the communicator gives up on sight, and checks it when it
 * starts. A program that fails on its own (a timeout) claims `failed` (0 -> 1),
 * fills `error`, then sets `failed` to 2; the host reads that in the
 * background (its monitor thread), never per launch, stops the communicator
 * and tells the root, which tells every other rank.
 *
 * `departed` does not stop anything: bit l says that local rank l (index on
 * this host) destroyed its communicator and left, all its work done. The
 * host sets bits (release) as the root reports departures; they only grow.
 * A wait for a given rank looks at it where it looks at the stop word, and
 * fails (SC_DEV_PEER_LEFT) only if what it waits for has not come by then:
 * what a rank did before leaving is visible once its bit is. Ranks on other
 * hosts have no bit (no program waits for them; the root's waits fail on
 * their own when such a rank leaves).
 *
 * `first` keeps the first failure of any program of the communicator, of
 * every kind (a stop met, a disagreement, a size mismatch too), claimed the
 * same way through `first_failed`: what symcomm_comm_get_async_error reads.
 * A stream's own failure record is the one its kernels were launched with,
 * which a CUDA graph replayed on another stream keeps; this one is the
 * communicator's wherever its kernels run. */
typedef struct sc_dev_status {
  uint32_t stop;   /* sc_stop_t; 0 while the communicator works */
  int32_t rank;    /* the rank `stop` names (-1: none) */
  uint32_t failed; /* device-written: 0, 1 (being filled), 2 (error is complete) or 3 (complete,
                      and a peer's mark told it: the host records it, tells nobody) */
  uint32_t first_failed; /* device-written: 0, 1 (being filled) or 2 (`first` is complete) */
  int32_t result;  /* host-written with `rank` and `why`: the failure's symcomm_result_t */
  uint32_t reserved;
  uint64_t departed; /* host-written: local ranks that left (bit = local rank) */
  sc_dev_error_t error;            /* device-written: the program's own failure */
  sc_dev_error_t first;            /* device-written: the first failure of any program */
  char why[SC_STATUS_WHY_BYTES];   /* host-written sentence for `stop` */
} sc_dev_status_t;

/* The sentence for a program's error (host code). */
void sc_dev_error_describe(const sc_dev_error_t *err, char *buf, size_t len);

#endif
