/* The memory layout and arguments of the P2P program (device/p2p.h), shared
 * by the host side that builds them (src/transport/p2p.c).
 *
 * Nothing in the arguments changes from one exchange to the next: message
 * numbers and ring positions are counters in device memory that the program
 * reads and advances, so the same argument block launched again (a CUDA graph
 * replayed) performs the next exchange. */
#ifndef SC_DEVICE_P2P_LAYOUT_H
#define SC_DEVICE_P2P_LAYOUT_H

#include "device/program.h"

#ifdef __CUDACC__
#define SC_P2P_FN static __host__ __device__ __forceinline__
#else
#define SC_P2P_FN static inline
#endif

/* Blocks a peer's ops may use at once (SYMCOMM_P2P_LANES): a message of
 * many lane_bytes runs in as many parts, each on its own block and its own
 * share of the pair's ring. */
#define SC_P2P_MAX_LANES 32

typedef struct sc_p2p_line {
  uint64_t value;
  uint64_t reserved[7]; /* a cache line each: written by different ranks */
} sc_p2p_line_t;

typedef struct sc_p2p_peer_lines {
  sc_p2p_line_t cts, cts_bytes;
  sc_p2p_line_t err_bytes; /* a send refused for size: its size | SC_SLOT_ERROR */
  sc_p2p_line_t cts_window, cts_offset; /* where the receive wants the data, if in a window */
  sc_p2p_line_t sends_done, recvs_done;
  sc_p2p_line_t gave_up; /* why the peer marked the pair failed (device/status.h relay mark) */
  sc_p2p_line_t eager_ack; /* eager messages the peer took: number + 1, or a refusal
                              (SC_P2P_EAGER_REFUSED: the peer's size) */
  sc_p2p_line_t ready[SC_P2P_MAX_LANES], ack[SC_P2P_MAX_LANES]; /* a pair of counters per lane */
} sc_p2p_peer_lines_t;

/* In eager_ack: the receiver refused an eager message (or the header of a
 * larger one) for its size; with SC_SLOT_ERROR and the receiver's size in
 * the low bits. */
#define SC_P2P_EAGER_REFUSED (1ull << 62)

typedef struct sc_p2p_pad {
  sc_doorbell_t bell;
  sc_p2p_peer_lines_t peer[SC_MAX_LOCAL_RANKS];
} sc_p2p_pad_t;

/* This rank's own counters about one local peer and direction, in its
 * device memory. A message's number comes from `tickets`, taken (an atomic
 * add) by the op's lead block when it starts, whatever stream it runs on; it
 * counts modulo 2^32 and becomes the 64-bit number against the pair's done
 * counter (see sc_p2p_claim). Each other lane l of the op's launch claims
 * lane_tickets[l] alike, so that the lane's n-th claim is the n-th message.
 * A send's lead leaves the receiver's window buffer in `direct` at the
 * rendezvous (its block's threads read it there); a message of several parts
 * it publishes (`print`, `parts_left`, then `go`) once its turn has come and
 * the receiver agreed; the lane that finishes the last part marks it done.
 * chunks[l] counts the chunks lane l's ring has carried: touched only by the
 * lane while its message runs. */
typedef struct sc_p2p_queue {
  uint32_t tickets;
  uint32_t parts_left; /* parts of the published message not finished yet */
  uint64_t go;         /* the published message's number + 1 (0: none yet) */
  uint64_t print;      /* which op of which launch it is (sc_p2p_print) */
  uint64_t direct;     /* a send: the receiver's window buffer (0: through the ring) */
  uint64_t eager_unacked; /* a send: number + 1 of the last eager message, which ended
                             once put, maybe before its ack (0: none yet) */
  uint64_t eager_unacked_bytes; /* ... and its size, for the sentence of a refusal */
  uint32_t lane_tickets[SC_P2P_MAX_LANES]; /* [0] unused: the lead takes `tickets` */
  uint64_t chunks[SC_P2P_MAX_LANES];
} sc_p2p_queue_t;

typedef struct sc_p2p_pair {
  sc_p2p_queue_t queue[2]; /* [SC_P2P_SEND], [SC_P2P_RECV] */
} sc_p2p_pair_t;

/* Per communicator and rank, in device memory (dev_alloc; uploaded once at
 * setup, then only the program writes `pair`). */
typedef struct sc_p2p_desc {
  sc_guard_t guard;
  const sc_dev_window_t *windows;   /* the communicator's window table, device copy */
  sc_p2p_pad_t *pads[SC_MAX_LOCAL_RANKS]; /* each local rank's p2p window (pad, then rings),
                                              mapped here; mine included */
  int32_t ranks[SC_MAX_LOCAL_RANKS];      /* each local rank's rank in the communicator */
  uint64_t chunk_bytes;
  uint64_t ring_offset; /* of the first ring in a p2p window */
  uint64_t eager_offset; /* of the first eager slot in a p2p window (one per peer) */
  uint64_t eager_stride; /* bytes from one peer's eager slot to the next */
  uint64_t eager_bytes;  /* messages of up to this many bytes go eagerly (0: none) */
  uint64_t lane_bytes;  /* a message runs in one part per lane_bytes, up to `lanes` parts */
  uint32_t slots;       /* of a pair's ring: lane l has slots / lanes of them, from l x that */
  uint32_t lanes;       /* blocks per peer in a launch, 1..SC_P2P_MAX_LANES, at most slots */
  int32_t rank;         /* this rank in the communicator */
  int32_t local_rank;
  sc_p2p_pair_t pair[SC_MAX_LOCAL_RANKS];
} sc_p2p_desc_t;

enum { SC_P2P_SEND = 0, SC_P2P_RECV = 1 };

/* One send or receive, as the caller gave it. */
typedef struct sc_p2p_op {
  void *buf;
  uint64_t bytes;
  uint64_t offset;  /* receive into a window: the buffer's offset in it */
  uint32_t window;  /* ... and the window's id + 1 (0: through the ring) */
  uint8_t kind;     /* SC_P2P_SEND or SC_P2P_RECV */
  uint8_t peer;     /* the peer's local rank */
  uint8_t block;    /* the group of blocks that runs it (desc->lanes blocks from
                       block x lanes): one peer per group */
  uint8_t reserved;
} sc_p2p_op_t;

/* As many ops as one rank can have queues (a direction and a peer) on a host,
 * so that one op of each fits a launch (see sc_p2p_launch_group). */
#define SC_P2P_MAX_OPS (2 * (SC_MAX_LOCAL_RANKS - 1))

/* Launched with its first nops ops only: offsetof(ops) + nops * sizeof(op) bytes. */
typedef struct sc_p2p_args {
  sc_p2p_desc_t *desc;
  uint32_t nops;
  int32_t call; /* the collective (sc_call_t) the launch is a step of, for sentences; 0: none */
  uint64_t seq; /* ... and its number */
  uint32_t width; /* blocks of a group in this launch: desc->lanes, or 1 where every op is
                     one part (its lead then takes the lanes' tickets for them) */
  uint32_t reserved;
  /* The stop word's copy in device memory (comm_view.h's dev_stop), read
   * at the start instead of the host word; 0: none. */
  const uint32_t *stopped;
  /* desc->pads[desc->local_rank], here too: the block reads its own pad's
   * lines (the done counters) without waiting for the descriptor first. */
  sc_p2p_pad_t *my_pad;
  sc_p2p_op_t ops[SC_P2P_MAX_OPS];
} sc_p2p_args_t;

SC_P2P_FN uint64_t sc_p2p_chunks(uint64_t bytes, uint64_t chunk_bytes) {
  return bytes == 0 ? 1 : bytes / chunk_bytes + (bytes % chunk_bytes != 0);
}

/* Parts of a message: one per lane_bytes (at least one), at most `lanes`. */
SC_P2P_FN uint32_t sc_p2p_parts(uint64_t bytes, uint64_t lane_bytes, uint32_t lanes) {
  uint64_t n = lane_bytes > 0 ? bytes / lane_bytes : 1;
  return n < 1 ? 1 : n > lanes ? lanes : (uint32_t)n;
}

/* Part p of `parts` of a message: [*at, *at + *len), cut at 64-byte
 * multiples, so that every part keeps the buffers' alignment. */
SC_P2P_FN void sc_p2p_part(uint64_t bytes, uint32_t p, uint32_t parts, uint64_t *at,
                           uint64_t *len) {
  uint64_t units = (bytes + 63) / 64;
  uint64_t lo = units / parts * p + units % parts * p / parts;
  uint64_t hi = units / parts * (p + 1) + units % parts * (p + 1) / parts;
  lo *= 64;
  hi *= 64;
  *at = lo < bytes ? lo : bytes;
  *len = (hi < bytes ? hi : bytes) - *at;
}

/* Whether a message goes eagerly: each side decides from its own size, so
 * that sizes that differ across the threshold still meet (device/p2p_eager.h). */
SC_P2P_FN int sc_p2p_eager(uint64_t bytes, uint64_t eager_bytes) {
  return eager_bytes > 0 && bytes <= eager_bytes;
}

/* LL lines of an eager slot for `bytes`: the header, then 8 bytes a line. */
SC_P2P_FN uint64_t sc_p2p_eager_lines(uint64_t bytes) { return 1 + (bytes + 7) / 8; }

SC_P2P_FN uint64_t sc_p2p_args_bytes(uint32_t nops) {
  return (uint64_t)offsetof(sc_p2p_args_t, ops) + (uint64_t)nops * sizeof(sc_p2p_op_t);
}

#endif
