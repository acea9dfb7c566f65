/* The network engine: messages between ranks on different hosts over a
 * network (net.h), served by one progress thread per process.
 *
 * An endpoint belongs to one communicator. Ranks exchange the addresses
 * their endpoints listen on (through the bootstrap) and then post messages:
 * the n-th send from A to B meets B's n-th receive from A. For each directed
 * pair the sender connects on its first send: one control connection and
 * `sockets` data connections, each opened with a hello that names the
 * communicator, a token only its ranks know, both ranks and the socket. The
 * receiver grants chunks over the control connection when it has room for
 * them (at most `window` in flight per pair); the sender puts each granted
 * chunk, behind a header the receiver checks before it places a byte, on the
 * data connection with the fewest bytes queued. A small message (at most
 * eager_bytes) skips the grant: its bytes follow its size on the control
 * connection, and the receiver holds them until its receive is posted (a
 * bounded number of messages ahead). docs/ARCHITECTURE.md
 * ("The network between hosts") describes the protocol.
 *
 * Memory is host memory: a device's data is staged by the caller, chunk by
 * chunk (chunk_ptr may say "not yet"). All callbacks run on the progress
 * thread; they may post messages but never close an endpoint. */
#ifndef SC_TRANSPORT_NET_NET_ENGINE_H
#define SC_TRANSPORT_NET_NET_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/net/net.h" /* sc_net_addr_t, SC_NET_ADDR_BYTES */
#include "util/error.h"

typedef struct sc_net_endpoint sc_net_endpoint_t;

enum { SC_NET_SEND = 0, SC_NET_RECV = 1 };

typedef struct sc_net_config {
  int rank, nranks;
  uint64_t comm_id;   /* in every hello: which communicator */
  uint64_t token;     /* in every hello: a value only the communicator's ranks know (derived from its secret) */
  int64_t timeout_ms; /* a message that makes no progress this long fails (a silent peer); < 0: never */
  int sockets;        /* data sockets per directed pair (SYMCOMM_NET_SOCKETS) */
  size_t chunk_bytes; /* SYMCOMM_NET_CHUNK_BYTES, 1 MiB default; the same on every rank */
  int window;         /* chunks in flight per directed pair, SYMCOMM_NET_WINDOW, 32 default */
  size_t eager_bytes; /* SYMCOMM_NET_EAGER_BYTES (at most chunk_bytes): messages this small go
                       * without waiting for a grant; the same on every rank; 0: none */
  const char *name;   /* "comm 0x... rank r" for log lines (copied) */
  /* The endpoint's first failure (a closed or silent peer, a protocol error, a size mismatch):
   * called once, on the progress thread, with a sentence naming the peer rank and the
   * operation ("receive #7 of 1048576 bytes from rank 5: its connection closed"),
   * BEFORE any message's finish() reports the failure. The caller fails the communicator there. */
  void (*fail)(void *ctx, sc_result_t res, const char *sentence);
  void *fail_ctx;
} sc_net_config_t;

/* Fills sockets, chunk_bytes and window from SYMCOMM_NET_SOCKETS,
 * SYMCOMM_NET_CHUNK_BYTES and SYMCOMM_NET_WINDOW; INVALID_ARGUMENT naming the
 * variable for a value out of range. */
sc_result_t sc_net_config_from_env(sc_net_config_t *cfg);

/* Listens; *addr is what the other ranks need to reach it. */
sc_result_t sc_net_endpoint_open(const sc_net_config_t *cfg, sc_net_endpoint_t **ep, sc_net_addr_t *addr);
/* Every rank's address (after an all-gather); remote[r] says which ranks it
 * may exchange with (other hosts). Once, before the first post. */
sc_result_t sc_net_endpoint_set_peers(sc_net_endpoint_t *ep, const sc_net_addr_t *addrs, const bool *remote);
/* Closes its connections (peers see them close) and forgets it; messages still
 * posted finish with ABORTED (no fail() call). Returns once the progress
 * thread no longer touches it or its messages. Not from a callback. */
void sc_net_endpoint_close(sc_net_endpoint_t *ep);

typedef struct sc_net_msg sc_net_msg_t;

/* The engine's part of a message: the poster zeroes it. */
struct sc_net_msg_engine {
  sc_net_msg_t *next;  /* in the inbox, then in its queue */
  uint64_t seq;        /* its number among the messages of its (peer, kind) */
  uint64_t nchunks;
  uint64_t granted;    /* send: chunks the receiver granted; recv: chunks granted to the sender */
  uint64_t dispatched; /* send: chunks queued on a data connection */
  uint64_t done;       /* chunks that left (send) or landed (recv) */
  uint64_t peer_bytes; /* what the peer posted for this message, once peer_known */
  bool peer_known;
  uint8_t *eager;      /* recv: its bytes, come eagerly, not placed yet (malloc'd) */
};

struct sc_net_msg {
  /* filled by the poster */
  int peer, kind; /* SC_NET_SEND / SC_NET_RECV */
  uint64_t bytes; /* may be 0 */
  /* Host memory of chunk k ([k*chunk_bytes, min(bytes, (k+1)*chunk_bytes))): NULL = not yet
   * (send: not staged yet; recv: no room yet), asked again on a later turn of the
   * progress thread: after sc_net_wake(), a poller's hint or network traffic. */
  void *(*chunk_ptr)(sc_net_msg_t *m, uint64_t k);
  /* Chunk k is done: its bytes left (send: its memory may be reused) / landed (recv). */
  void (*chunk_done)(sc_net_msg_t *m, uint64_t k);
  /* The message ended: OK, or its failure (after cfg.fail, or ABORTED at close).
   * Called once; m may be freed inside. Messages of one (peer, kind) finish in order. */
  void (*finish)(sc_net_msg_t *m, sc_result_t res);
  void *user;
  struct sc_net_msg_engine engine; /* the engine's; the poster zeroes it */
};

/* Any thread. Messages of one (peer, kind) are matched with the peer's in the order posted:
 * the n-th send from A to B is B's n-th receive from A. A message the endpoint
 * refuses (bad arguments; a failed or closing endpoint: the failure's result and
 * sentence) is not taken: its finish() is never called. */
sc_result_t sc_net_post(sc_net_endpoint_t *ep, sc_net_msg_t *m);

/* Work the progress thread does each turn besides sockets (reading a queue
 * that device programs fill, checking staging copies), at the end of the
 * turn, after the turn's chunk_ptr calls: its hint covers a "not yet" given
 * during the turn. Returns the longest,
 * in microseconds, the thread may sleep before calling it again (0: call
 * again at once; -1: no need until woken). Runs until the endpoint closes. */
typedef int64_t (*sc_net_poll_fn)(void *ctx);
sc_result_t sc_net_endpoint_add_poller(sc_net_endpoint_t *ep, sc_net_poll_fn fn, void *ctx);

/* An fd (eventfd) that, written to (8 bytes, value 1), wakes the progress
 * thread; and a call that does it. -1 / nothing while no endpoint is open. */
int sc_net_wake_fd(void);
void sc_net_wake(void);

#endif
