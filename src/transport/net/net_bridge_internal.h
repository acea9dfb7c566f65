/* What the bridge's files share (net_bridge.c: the queue and messages;
 * net_staging.c: the pinned chunks GPU data goes through). Everything here is
 * touched by the progress thread only, once created. */
#ifndef SC_TRANSPORT_NET_BRIDGE_INTERNAL_H
#define SC_TRANSPORT_NET_BRIDGE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "transport/net/net_bridge.h"
#include "transport/net/net_engine.h"

/* One staging chunk: pinned host memory, and the copy that fills or empties it. */
typedef enum { SC_STAGE_FREE = 0, SC_STAGE_LOADING, SC_STAGE_LOADED, SC_STAGE_FILLING,
               SC_STAGE_UNLOADING } sc_stage_state_t;
typedef struct sc_stage {
  void *mem;
  sc_event_t *copied;
  sc_stage_state_t state;
  struct sc_net_slot *owner; /* the message whose chunk it holds */
  uint64_t chunk;
} sc_stage_t;

/* The staging chunks of one peer and direction, made on first use. */
typedef struct sc_stage_pool {
  sc_stage_t *stage; /* [n] */
  int n;
} sc_stage_pool_t;

/* A queue slot's message while the engine moves it. */
typedef struct sc_net_slot {
  sc_net_msg_t msg;
  struct sc_net *net;
  uint32_t ticket;
  bool active;           /* taken, not yet done */
  bool engine_done;      /* the engine finished it (result) */
  sc_result_t result;
  char *buf;             /* device address of the data */
  int unloading;         /* staged receive: copies to the device still running */
} sc_net_slot_t;

struct sc_net {
  sc_comm_view_t *view;
  const sc_backend_ops_t *ops;
  sc_net_endpoint_t *ep;
  sc_net_queue_t *queue; /* host memory the program maps */
  sc_net_desc_t *desc;   /* device memory */
  sc_net_fail_fn fail;
  void *fail_ctx;
  uint64_t chunk_bytes;
  int window;
  bool staged;           /* GPU buffers: chunks go through pinned staging */
  uint32_t taken;        /* next ticket to take from the queue */
  /* Until when (sc_now_us) the progress thread looks at the queue often: a
   * launch queued now may post any moment (the caller's threads set it). */
  atomic_int_fast64_t hurry_until_us;
  sc_net_slot_t slot[SC_NET_QUEUE_SLOTS];
  sc_stream_t *load_stream, *unload_stream; /* device to staging, staging to device */
  sc_stage_pool_t *pools; /* [2 * nranks]: (peer, kind) */
  char name[64];          /* for the engine's log lines */
};

/* net_staging.c */
void *sc_net_stage_send_chunk(sc_net_slot_t *s, uint64_t k);
void sc_net_stage_sent(sc_net_slot_t *s, uint64_t k);
void *sc_net_stage_recv_chunk(sc_net_slot_t *s, uint64_t k);
void sc_net_stage_received(sc_net_slot_t *s, uint64_t k);
/* A send ended: the chunks it loaded ahead and never sent are free again (after their copies). */
void sc_net_stage_drop_sends(sc_net_slot_t *s);
/* Finished copies to the device free their chunks; true while any copy runs. */
bool sc_net_stage_poll(sc_net_t *net);
void sc_net_stage_free(sc_net_t *net);

/* net_bridge.c: the message's end, once its data is where it belongs. */
void sc_net_slot_complete(sc_net_slot_t *s);
/* A staging copy failed: the communicator fails with a sentence. */
void sc_net_bridge_fail(sc_net_t *net, sc_result_t res, const char *sentence);

#endif
