/* The network engine's insides, shared by its files:
 *   net_thread.c    the one progress thread: its loop, the inbox, start and stop
 *   net_endpoint.c  the API: open, peers, post, pollers, close; failing an endpoint
 *   net_conn.c      connections: connect with retry, accept and hello, control records
 *   net_io.c        moving a turn's bytes (data connections on helper threads), settling what moved
 *   net_msg.c       messages: sizes, grants, chunks out and in, finishing, deadlines
 * Everything here but the fields marked "under the engine lock" belongs to
 * the progress thread. */
#ifndef SC_TRANSPORT_NET_NET_INTERNAL_H
#define SC_TRANSPORT_NET_NET_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "transport/net/net.h"
#include "transport/net/net_engine.h"
#include "transport/net/net_wire.h"
#include "util/param.h"

/* After one connection of a pair closes, what is still buffered from the
 * others may finish its messages; once nothing moved this long (or every
 * connection closed), the messages with that peer fail. */
#define SC_NET_CLOSE_GRACE_MS 200
/* How long a connection may take to say its hello. */
#define SC_NET_HELLO_MS 10000

typedef struct net_buf { /* bytes waiting to be written: [off, len) */
  uint8_t *data;
  size_t off, len, cap;
} net_buf_t;

typedef struct net_chunk_out { /* a chunk queued on a data connection */
  sc_net_chunk_hdr_t hdr;
  const uint8_t *ptr;
  sc_net_msg_t *m;
  size_t done; /* bytes of header and payload written */
} net_chunk_out_t;

enum { NET_OUT = 0, NET_IN = 1 }; /* we connected (we send on the pair) / we accepted */
enum { NET_CONN_IDLE, NET_CONN_CONNECTING, NET_CONN_HELLO, NET_CONN_OPEN, NET_CONN_CLOSED };

typedef struct net_peer net_peer_t;

typedef struct net_conn {
  sc_net_conn_t *c;
  net_peer_t *peer; /* NULL while an accepted connection has not said who it is */
  int dir, index, state;
  int64_t deadline_ms; /* hello of an accepted connection */
  struct net_conn *next; /* accepted, not identified yet */
  net_buf_t out;         /* hello and control records */
  uint8_t in[4096];      /* hello, control records, a chunk header */
  size_t in_len;
  /* control, receiving: the bytes of an EAGER record, read into eager (malloc'd) until all came */
  uint8_t *eager;
  uint64_t eager_seq, eager_len, eager_got;
  /* data, sending: a ring of chunks */
  net_chunk_out_t *ring;
  int ring_head, ring_count, ring_cap;
  uint64_t queued; /* bytes in the ring not written yet */
  /* data, receiving */
  int slot; /* whose payload arrives, -1: a header is next */
  uint64_t slot_got;
  /* What the thread that moved its bytes found, for the progress thread to settle (net_io.c). */
  struct {
    bool moved;            /* chunk bytes moved */
    sc_result_t lost;      /* the connection closed (REMOTE) or failed (SYSTEM, err) */
    int err;
    bool bad;              /* a protocol error: why */
    char why[320];
    net_chunk_out_t *sent; /* [ring_cap] chunks that left (outgoing data) */
    int n_sent;
    int *landed;           /* [window] slots whose payload landed (incoming data) */
    int n_landed;
  } io;
} net_conn_t;

/* A slot's seq once a header claimed it (no message has this number). */
#define NET_SLOT_CLAIMED UINT64_MAX
typedef struct net_slot { /* a chunk granted to the sender, not landed yet */
  sc_net_msg_t *m;        /* NULL: free */
  uint64_t seq, chunk, offset, length;
  uint8_t *ptr;
} net_slot_t;

typedef struct net_grant {
  uint64_t seq, first, count;
} net_grant_t;

typedef struct net_early { /* the peer's word on a message not posted here yet */
  uint64_t bytes;
  uint8_t *data; /* its bytes, when it came eagerly (malloc'd) */
} net_early_t;

typedef struct net_queue { /* the messages of one (peer, kind), in order */
  sc_net_msg_t *head, *tail;
  sc_net_msg_t *size_next; /* first whose SIZE record has not gone out */
  sc_net_msg_t *work_next; /* recv: first not fully granted; send: first not fully dispatched */
  uint64_t next_seq;       /* number of the next message posted */
  uint64_t size_sent;      /* messages whose SIZE record went out */
  uint64_t peer_seq;       /* number of the next SIZE record from the peer */
  net_early_t *early;      /* the peer's sizes (and eager bytes) for messages not posted here yet */
  size_t n_early, cap_early;
  int64_t progress_ms;     /* when something last moved for it */
} net_queue_t;

struct net_peer {
  int rank;
  bool remote;
  sc_net_addr_t addr;
  net_conn_t *out, *in; /* [1 + sockets] each: [0] control, then data */
  net_queue_t sendq, recvq;
  /* connecting (send side) */
  bool connecting;
  int64_t connect_deadline_ms, retry_ms;
  int backoff_ms, connect_err;
  /* send side: grants for messages not posted yet */
  net_grant_t *grants;
  size_t n_grants, cap_grants;
  /* send side: the peer's window, which its SIZE records carry (0 until one
   * came): how far ahead of its receives small messages may go eagerly */
  uint64_t peer_window;
  /* receive side */
  net_slot_t *slots; /* [window] */
  int outstanding;
  int64_t closed_ms; /* when one of its connections closed (0: none did) */
  char closed_why[160];
};

typedef struct net_poller {
  sc_net_poll_fn fn;
  void *ctx;
} net_poller_t;

struct sc_net_endpoint {
  sc_net_config_t cfg;
  char name[96];
  const sc_net_ops_t *ops;
  sc_net_listener_t *listener;
  net_peer_t *peers;     /* [nranks] */
  net_conn_t *accepted;  /* accepted, hello not read yet */
  int64_t listen_paused_until_ms; /* out of fds: the listener rests until then */
  int fault_seq_after;   /* SYMCOMM_NET_FAULT=seq: chunks before the one with a wrong number; -1 none */
  uint64_t chunks_sent;
  net_poller_t *pollers;
  int n_pollers;
  size_t cap_pollers;
  bool peers_ready;      /* the thread's copy of peers_set */
  sc_result_t failed;    /* the thread's copy of result */
  sc_net_msg_t *taken;   /* inbox taken this turn */
  /* under the engine lock */
  sc_net_msg_t *inbox_head, *inbox_tail;
  net_poller_t *new_pollers;
  int n_new_pollers;
  size_t cap_new_pollers;
  bool peers_set, closing, closed;
  sc_result_t result;
  char sentence[512];
  struct sc_net_endpoint *next;
};

/* A message that goes without a grant (its bytes after its EAGER record). */
static inline bool net_eager(const sc_net_endpoint_t *ep, uint64_t bytes) {
  return bytes > 0 && bytes <= ep->cfg.eager_bytes;
}

/* net_thread.c */
void net_lock(void);
void net_unlock(void);
/* Adds ep to the thread's endpoints (starting the thread for the first). */
sc_result_t net_thread_add(sc_net_endpoint_t *ep);
/* Has the thread forget ep (stopping it after the last); returns when it has. */
void net_thread_remove(sc_net_endpoint_t *ep);
bool net_on_thread(void);

/* net_endpoint.c */
/* An integer parameter in [lo, hi], else INVALID_ARGUMENT naming the variable. */
sc_result_t net_param_range(sc_param_id_t id, long long lo, long long hi, long long *out);
/* The endpoint's first failure: records it, calls cfg.fail, closes every
 * connection and finishes every message with res. Formats like printf. */
void net_fail(sc_net_endpoint_t *ep, sc_result_t res, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every message finishes with res (no fail()); every connection closes. */
void net_ep_shutdown(sc_net_endpoint_t *ep, sc_result_t res);
/* "receive #7 of 1048576 bytes from rank 5" */
void net_msg_name(const sc_net_msg_t *m, char *buf, size_t len);
/* The operation a failure with peer p belongs to: the first message posted with it. */
void net_peer_op_name(const net_peer_t *p, char *buf, size_t len);
int64_t net_now_ms(void);

/* net_conn.c */
void net_conn_init(net_conn_t *c, net_peer_t *peer, int dir, int index);
void net_conn_close(sc_net_endpoint_t *ep, net_conn_t *c);
void net_conn_free(sc_net_endpoint_t *ep, net_conn_t *c);
sc_result_t net_buf_put(net_buf_t *b, const void *data, size_t len);
/* Makes room for `need` elements of `elem` bytes in *array (of *cap); false: no memory. */
bool net_grow(void **array, size_t *cap, size_t need, size_t elem);
void net_accept_all(sc_net_endpoint_t *ep);
void net_accepted_io(sc_net_endpoint_t *ep, net_conn_t *c, short revents);
void net_conn_io(sc_net_endpoint_t *ep, net_conn_t *c, short revents);
/* One try at writing the control records a connection holds, also after a failure. */
void net_conn_flush_records(sc_net_endpoint_t *ep, net_conn_t *c);
void net_peer_connect(sc_net_endpoint_t *ep, net_peer_t *p, int64_t now, int64_t *wake_ms);
/* A connection of p closed or failed (why: "its connection closed"). */
void net_peer_conn_lost(sc_net_endpoint_t *ep, net_conn_t *c, const char *why);
bool net_conn_wants_write(const net_conn_t *c);

/* net_io.c */
typedef struct net_io_item {
  sc_net_endpoint_t *ep;
  net_conn_t *conn;
  short revents;
} net_io_item_t;
/* Starts the helper threads (SYMCOMM_NET_THREADS) / stops them. */
sc_result_t net_io_start(void);
void net_io_stop(void);
/* Moves the bytes of ready data connections, spread over the helpers; returns
 * when all are done. Each connection's findings wait in its io for net_conn_settle. */
void net_io_run(net_io_item_t *items, int n);
/* Writes what c holds until the kernel takes no more (any thread: touches only c). */
void net_conn_write(sc_net_endpoint_t *ep, net_conn_t *c);
/* Acts on what moving c's bytes found: chunks sent and landed, a failure (the progress thread). */
void net_conn_settle(sc_net_endpoint_t *ep, net_conn_t *c);
/* net_conn_write, then net_conn_settle. */
void net_conn_flush(sc_net_endpoint_t *ep, net_conn_t *c);

/* net_msg.c */
/* A message taken from the inbox joins its queue. */
void net_msg_attach(sc_net_endpoint_t *ep, sc_net_msg_t *m);
/* Sizes, grants, chunks, finishing, deadlines of one peer; lowers *wake_ms to
 * when it must be looked at again. */
void net_peer_progress(sc_net_endpoint_t *ep, net_peer_t *p, int64_t now, int64_t *wake_ms);
/* A control record from c's peer; after an EAGER record, c->eager waits for its bytes. */
void net_ctrl_records(sc_net_endpoint_t *ep, net_conn_t *c, const sc_net_rec_t *r);
/* All bytes of c's EAGER record came: they go to their receive (or wait for it). */
void net_eager_landed(sc_net_endpoint_t *ep, net_conn_t *c);
/* A chunk header arrived on data connection c: checks it against the slots
 * granted and claims the slot its payload goes to; -1 with the sentence in
 * why. Any thread (two connections of a peer may claim at once). */
int net_chunk_claim(sc_net_endpoint_t *ep, net_conn_t *c, const sc_net_chunk_hdr_t *h, char *why, size_t len);
void net_chunk_landed(sc_net_endpoint_t *ep, net_peer_t *p, int slot);
void net_chunk_sent(sc_net_endpoint_t *ep, net_peer_t *p, net_chunk_out_t *co);
/* Drops every message of ep's queues, finishing each with res. */
void net_msgs_finish_all(sc_net_endpoint_t *ep, sc_result_t res);
void net_queue_free(net_queue_t *q);

#endif
