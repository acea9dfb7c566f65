/* Send/recv between ranks of one host, over each rank's p2p window (the
 * protocol itself is the P2P device program, src/device/p2p.h). This side
 * sets up the window and the descriptor the program works from, and turns
 * sends and receives into launches of that program: one op each, or a whole
 * group. It keeps no counters: message numbers and ring positions live in
 * device memory, so an argument block can be launched again (a CUDA graph).
 * Nothing here allocates or waits once set up. */
#ifndef SC_TRANSPORT_P2P_H
#define SC_TRANSPORT_P2P_H

#include <stddef.h>

#include "device/p2p_layout.h"
#include "window/window.h"

typedef struct sc_p2p sc_p2p_t;

/* Collective: every rank's p2p window (a pad, then per local peer an eager
 * slot for SYMCOMM_P2P_EAGER_BYTES and a staging ring of SYMCOMM_P2P_SLOTS
 * chunks of SYMCOMM_P2P_CHUNK_BYTES shared by its lanes; memory is only
 * used where a pair actually sends) and this rank's descriptor in device
 * memory. Not needed when alone on the host. */
sc_result_t sc_p2p_create(sc_comm_view_t *view, sc_p2p_t **p2p);
/* Local: unmaps without waiting for anyone (communicator destroy). */
void sc_p2p_destroy(sc_p2p_t *p2p);

/* The event that orders one stream after another for the queue of `kind`
 * with local peer `peer` (the caller records it and waits on it at once), so
 * that sends and receives of one pair and direction run in call order
 * whatever streams they are queued on: the lanes of a message must all come
 * from its own launch. One per queue: see struct sc_p2p. */
sc_event_t *sc_p2p_order_event(const sc_p2p_t *p2p, int kind, int peer);

/* An op of kind SC_P2P_SEND/RECV with `peer` (a rank of this host, not this
 * rank). A receive whose buffer lies in one of the communicator's windows
 * asks for the data straight there. */
void sc_p2p_op_make(const sc_p2p_t *p2p, int kind, int peer, void *buf, size_t bytes,
                    sc_p2p_op_t *op);

/* The argument block and grid of one launch of ops[0..n), n <= SC_P2P_MAX_OPS:
 * a group of SYMCOMM_P2P_LANES blocks per peer (of one block where every
 * message is one part), in an order both sides of each pair agree on (see
 * p2p.c). Launching the same block again performs the next exchange. */
void sc_p2p_build(const sc_p2p_t *p2p, const sc_p2p_op_t *ops, int n, sc_p2p_args_t *args,
                  size_t *args_bytes, uint32_t *blocks);
sc_result_t sc_p2p_launch(const sc_p2p_t *p2p, sc_stream_t *stream, const sc_p2p_args_t *args,
                          size_t args_bytes, uint32_t blocks);

/* Queues a group's ops[0..n) on stream (any n), in launches of at most
 * SC_P2P_MAX_OPS ops that a matching group on every peer splits alike; as a
 * step of collective `call` (sc_call_t) number `seq`, or of none (0). On
 * failure, the launches before the one refused stay queued. */
sc_result_t sc_p2p_launch_group(const sc_p2p_t *p2p, sc_stream_t *stream, const sc_p2p_op_t *ops,
                                int n, int call, uint64_t seq);

#endif
