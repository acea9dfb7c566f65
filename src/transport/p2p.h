/* Send/recv between ranks of one host, over each rank's p2p window (the
 * protocol itself is the P2P device program, src/device/p2p.h). This side
 * keeps the message counters of every pair and turns sends and receives into
 * launches of that program: one op each, or a whole group in one launch. */
#ifndef SC_TRANSPORT_P2P_H
#define SC_TRANSPORT_P2P_H

#include <stddef.h>

#include "device/p2p_layout.h"
#include "window/window.h"

typedef struct sc_p2p sc_p2p_t;

/* Collective: every rank's p2p window (a pad and a staging ring per local
 * peer, SYMCOMM_P2P_SLOTS chunks of SYMCOMM_P2P_CHUNK_BYTES; memory is only
 * used where a pair actually sends). Not needed when alone on the host. */
sc_result_t sc_p2p_create(sc_comm_view_t *view, sc_p2p_t **p2p);
/* Local: unmaps without waiting for anyone (communicator destroy). */
void sc_p2p_destroy(sc_p2p_t *p2p);

/* The next op of kind SC_P2P_SEND/RECV with `peer` (a rank of this host, not
 * this rank); advances the pair's counters, so call it in posting order. */
sc_result_t sc_p2p_prepare(sc_p2p_t *p2p, int kind, int peer, void *buf, size_t bytes,
                           sc_p2p_op_t *op);
/* Queues ops[0..n) as one batch on stream: they advance together. If the
 * stream refuses it, the ops are cancelled (see sc_p2p_cancel). */
sc_result_t sc_p2p_launch(sc_p2p_t *p2p, sc_stream_t *stream, const sc_p2p_op_t *ops, int n);
/* Takes back prepared ops that will not be queued, newest first: their
 * message numbers are returned to the pair. A pair on which a later op was
 * already prepared cannot be set back; it is marked out of step, and its next
 * prepare fails with a sentence saying so. */
void sc_p2p_cancel(sc_p2p_t *p2p, const sc_p2p_op_t *ops, int n);

#endif
