/* The memory layout and arguments of the P2P program (device/p2p.h), shared
 * by the host side that builds them (src/transport/p2p.c). */
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

enum { SC_P2P_SEND = 0, SC_P2P_RECV = 1 };

typedef struct sc_p2p_op {
  int32_t kind;       /* SC_P2P_SEND or SC_P2P_RECV */
  int32_t peer;       /* the peer's rank in the communicator (for error sentences) */
  int32_t peer_index; /* the peer's lines in my pad: its local rank */
  int32_t my_index;   /* my lines in the peer's pad: my local rank */
  sc_p2p_pad_t *peer_pad;
  char *ring;         /* send: the peer's ring for my data; receive: my ring for the peer's */
  void *buf;
  uint64_t bytes;
  uint64_t msg;
  uint64_t chunk_base;
  uint64_t window;    /* receive into a window: its id + 1 (0: through the ring) */
  uint64_t offset;    /* ... and the buffer's offset in it */
  /* progress, kept here: every launch runs on its own copy of the arguments */
  uint32_t phase;
  uint32_t chunk;
  char *direct; /* send: the receiver's window buffer, when it asked for one */
} sc_p2p_op_t;

typedef struct sc_p2p_args {
  sc_p2p_pad_t *my_pad;
  const sc_dev_window_t *windows; /* the communicator's window table (SC_MAX_WINDOWS) */
  sc_guard_t guard;
  uint64_t chunk_bytes;
  uint32_t slots;
  uint32_t nops;
  int32_t rank; /* this rank in the communicator */
  int32_t reserved;
  sc_p2p_op_t ops[];
} sc_p2p_args_t;

enum { SC_P2P_PHASE_ORDER = 0, SC_P2P_PHASE_HANDSHAKE, SC_P2P_PHASE_CHUNKS, SC_P2P_PHASE_DONE };

SC_P2P_FN uint64_t sc_p2p_chunks(uint64_t bytes, uint64_t chunk_bytes) {
  return bytes == 0 ? 1 : bytes / chunk_bytes + (bytes % chunk_bytes != 0);
}

#endif
