/* Send/recv between hosts as stream-ordered work: the NET device program
 * (device/net.h) posts each op into the communicator's queue in host memory;
 * here, on the network's progress thread (net_engine.h), the queue is read,
 * its ops become the engine's messages, and their completion goes back to the
 * waiting program through the queue's done words. Buffers the host cannot
 * reach (GPU memory) go through pinned staging chunks, copied by the copy
 * engine on streams of the bridge's own; a staging chunk is used again only
 * once the copy that reads it has completed.
 *
 * The caller's thread never waits here once set up: it queues a launch and
 * wakes the progress thread. */
#ifndef SC_TRANSPORT_NET_BRIDGE_H
#define SC_TRANSPORT_NET_BRIDGE_H

#include <stddef.h>

#include "device/net_layout.h"
#include "device/p2p_layout.h"
#include "window/comm_view.h"

typedef struct sc_net sc_net_t;

/* Called once, on the progress thread, with the network's first failure (a
 * sentence naming the peer and the operation), before any program hears of
 * it: the communicator fails there. */
typedef void (*sc_net_fail_fn)(void *ctx, sc_result_t res, const char *sentence);

/* Collective over the communicator's bootstrap (every rank, when its ranks
 * are on several hosts): listens, all-gathers the addresses, makes the queue
 * and the program's descriptor. Connections are made on first use. */
sc_result_t sc_net_create(sc_comm_view_t *view, sc_net_fail_fn fail, void *fail_ctx,
                          sc_net_t **net);
/* Local: closes the connections (peers see them close) and frees what the
 * programs use: call once none of them may run. */
void sc_net_destroy(sc_net_t *net);

/* A send or receive (kind SC_P2P_SEND or SC_P2P_RECV, as for sc_p2p_op_make)
 * with rank `peer` of another host. */
static inline sc_net_op_t sc_net_op_make(int kind, int peer, void *buf, size_t bytes) {
  return (sc_net_op_t){.buf = buf, .bytes = bytes, .peer = peer,
                       .kind = kind == SC_P2P_SEND ? SC_NET_OP_SEND : SC_NET_OP_RECV};
}

/* Queues one launch of the NET program on stream for ops[0..n): n <=
 * SC_NET_MAX_OPS (UNSUPPORTED beyond: a second launch could wait for the first
 * forever), peers on other hosts; as a step of collective `call` (sc_call_t)
 * number `seq`, or of none (0). */
sc_result_t sc_net_launch(sc_net_t *net, sc_stream_t *stream, const sc_net_op_t *ops, int n,
                          int call, uint64_t seq);

#endif
