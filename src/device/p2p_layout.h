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

typedef struct sc_p2p_line {
  uint64_t value;
  uint64_t reserved[7]; /* a cache line each: written by different ranks */
} sc_p2p_line_t;

typedef struct sc_p2p_peer_lines {
  sc_p2p_line_t ready, ack, cts, cts_bytes;
  sc_p2p_line_t err_bytes; /* a send refused for size: its size | SC_SLOT_ERROR */
  sc_p2p_line_t cts_window, cts_offset; /* where the receive wants the data, if in a window */
  sc_p2p_line_t sends_done, recvs_done;
  sc_p2p_line_t gave_up; /* why the peer marked the pair failed (device/status.h relay mark) */
} sc_p2p_peer_lines_t;

typedef struct sc_p2p_pad {
  sc_doorbell_t bell;
  sc_p2p_peer_lines_t peer[SC_MAX_LOCAL_RANKS];
} sc_p2p_pad_t;

/* This rank's own counters about one local peer, in its device memory. A
 * ticket is claimed (compare and swap) by each op when it starts, whatever
 * stream it runs on; it counts modulo 2^32 and becomes the 64-bit message
 * number against the pair's done counter (see sc_p2p_claim). The chunk
 * counters are touched only by the op whose turn it is (done == its number). */
typedef struct sc_p2p_pair {
  uint32_t send_tickets, recv_tickets;
  uint64_t send_chunks, recv_chunks; /* chunks of the pair's finished messages */
  uint64_t reserved[6];              /* a cache line per pair */
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
  uint32_t slots;
  int32_t rank;         /* this rank in the communicator */
  int32_t local_rank;
  int32_t reserved;
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
  uint8_t block;    /* the block that runs it: one peer per block */
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
  sc_p2p_op_t ops[SC_P2P_MAX_OPS];
} sc_p2p_args_t;

SC_P2P_FN uint64_t sc_p2p_chunks(uint64_t bytes, uint64_t chunk_bytes) {
  return bytes == 0 ? 1 : bytes / chunk_bytes + (bytes % chunk_bytes != 0);
}

SC_P2P_FN uint64_t sc_p2p_args_bytes(uint32_t nops) {
  return (uint64_t)offsetof(sc_p2p_args_t, ops) + (uint64_t)nops * sizeof(sc_p2p_op_t);
}

#endif
