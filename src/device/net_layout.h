/* The memory layout and arguments of the NET program (device/net.h): sends
 * and receives with ranks on other hosts, which the device hands to the
 * host's network progress thread (src/transport/net/) through a queue in host
 * memory, and whose completion it waits for there.
 *
 * Nothing in the arguments changes from one launch to the next: queue
 * positions are counters the program claims at run time, so the same argument
 * block launched again (a CUDA graph replayed) posts the next messages. */
#ifndef SC_DEVICE_NET_LAYOUT_H
#define SC_DEVICE_NET_LAYOUT_H

#include "device/program.h"

#ifdef __CUDACC__
#define SC_NET_FN static __host__ __device__ __forceinline__
#else
#define SC_NET_FN static inline
#endif

/* Entries of a communicator's queue; a slot is used again SC_NET_QUEUE_SLOTS
 * posts later, once the message it held has finished. */
#define SC_NET_QUEUE_SLOTS 512u

enum { SC_NET_OP_SEND = 0, SC_NET_OP_RECV = 1 };

/* One message as the device posts it: written by the program, read by the
 * host. `posted` last: the slot's ticket + 1 once the fields are written. */
typedef struct sc_net_entry {
  uint64_t buf; /* device address of the data */
  uint64_t bytes;
  int32_t peer; /* rank in the communicator */
  int32_t kind; /* SC_NET_OP_SEND or SC_NET_OP_RECV */
  uint64_t reserved[4];
  uint64_t posted;
} sc_net_entry_t;

/* A communicator's queue, in host memory both sides map (host_alloc). Slot
 * s (a 32-bit ticket, counting modulo 2^32) is entry[s % SLOTS]; its message
 * is finished once done[s % SLOTS] reaches s + 1 (serial comparison), with
 * SC_SLOT_ERROR set when it failed. The host finishes the messages of one
 * slot index in ticket order (it takes slot s + SLOTS only after s is
 * done), so a done word only grows. */
typedef struct sc_net_queue {
  sc_doorbell_t bell;      /* rung by the program after it posted (wakes the host) */
  sc_doorbell_t done_bell; /* rung by the host after a done word or `moved` changed */
  uint64_t moved;          /* host-written: chunks moved so far, any message (progress) */
  uint64_t reserved[7];
  uint64_t done[SC_NET_QUEUE_SLOTS];
  sc_net_entry_t entry[SC_NET_QUEUE_SLOTS];
} sc_net_queue_t;

/* Per communicator and rank, in device memory (dev_alloc; uploaded once). */
typedef struct sc_net_desc {
  sc_guard_t guard;
  sc_net_queue_t *queue;
  uint32_t tickets;  /* program-written: slots claimed so far (compare and swap) */
  uint32_t reserved;
  uint64_t reserved2[6];
} sc_net_desc_t;

/* One send or receive with a rank of another host. */
typedef struct sc_net_op {
  void *buf;
  uint64_t bytes;
  int32_t peer;
  int32_t kind;
} sc_net_op_t;

/* Ops of one launch: they are all posted, then all awaited, so that a
 * group's sends and receives proceed together. A group with more for one
 * stream is refused (a second launch could wait for the first forever). */
#define SC_NET_MAX_OPS 128

/* Launched with its first nops ops only: offsetof(ops) + nops * sizeof(op) bytes. */
typedef struct sc_net_args {
  sc_net_desc_t *desc;
  uint32_t nops;
  int32_t call; /* the collective (sc_call_t) the launch is a step of, for sentences; 0: none */
  uint64_t seq; /* ... and its number */
  sc_net_op_t ops[SC_NET_MAX_OPS];
} sc_net_args_t;

SC_NET_FN uint64_t sc_net_args_bytes(uint32_t nops) {
  return (uint64_t)offsetof(sc_net_args_t, ops) + (uint64_t)nops * sizeof(sc_net_op_t);
}

/* Whether done word `done` says ticket t finished (serial comparison on the low 32 bits). */
SC_NET_FN int sc_net_done_reached(uint64_t done, uint32_t t) {
  return (int32_t)((uint32_t)done - (t + 1u)) >= 0;
}

#endif
