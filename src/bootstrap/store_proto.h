/* The root's wire protocol. Every message starts with SC_STORE_MAGIC; a
 * connection opens with a hello naming the protocol version, the session (one
 * job or one split communicator) and the client's rank. After that the client
 * sends one request at a time and waits for its reply.
 *
 *   client -> root   hello                      (sc_store_hello_t)
 *   root -> client   reply                      (sc_store_reply_t + text)
 *   client -> root   request + key + value      (sc_store_request_t)
 *   root -> client   reply + text + value       (sc_store_reply_t)
 *
 * A reply carries a text (the sentence explaining a failure) or a value (on
 * success), never both. BYE and FAIL get no reply: the client closes after them.
 *
 * A rank's second connection, its watch, opens with a hello whose op is WATCH
 * (same layout; the rank must have joined the session). The root answers OK,
 * then nothing until the session fails; then one reply with the failure: its
 * status and sentence, and in `arg` the rank it names and why (see
 * sc_store_watch_arg). On the watch, the client may send one FAIL (value = its
 * sentence, arg = SC_STORE_CAUSE_FAILED or _ABORTED): the session then fails,
 * naming that rank. A watch that closes changes nothing.
 * Before that, while the session works, the root also says on each watch
 * which other ranks left on purpose (BYE): a reply with status OK, text
 * empty and arg = sc_store_watch_arg(rank, SC_STORE_CAUSE_LEFT), once per
 * rank, including those that left before the watch opened. The session
 * goes on: the ranks still in it may have work that does not need them.
 *
 * Integers are in host byte order: every rank of a job runs on the same kind
 * of machine. */
#ifndef SC_BOOTSTRAP_STORE_PROTO_H
#define SC_BOOTSTRAP_STORE_PROTO_H

#include <stdint.h>

#define SC_STORE_MAGIC 0x434d5953u /* "SYMC" */
#define SC_STORE_VERSION 1

#define SC_STORE_MAX_KEY 1024
#define SC_STORE_MAX_VALUE (64u << 20)
#define SC_STORE_MAX_TEXT 1024
#define SC_STORE_MAX_RANKS (1 << 17)
#define SC_STORE_MAX_SESSIONS 256 /* kept at once by one root */
/* Keys and values that SET and ADD may keep in one session (this library
 * uses neither: its ranks meet through GATHER and BCAST, whose parts are
 * freed once answered). */
#define SC_STORE_MAX_SESSION_KV (16u << 20)

typedef enum sc_store_op {
  SC_STORE_OP_HELLO = 1,
  SC_STORE_OP_SET = 2,    /* key = value */
  SC_STORE_OP_GET = 3,    /* value of key, waiting until it is set */
  SC_STORE_OP_WAIT = 4,   /* wait until key is set */
  SC_STORE_OP_ADD = 5,    /* key += arg (int64, 0 when new); reply arg = new value */
  SC_STORE_OP_GATHER = 6, /* every rank gives value (same length); each gets all, rank order */
  SC_STORE_OP_BCAST = 7,  /* rank arg gives value; each rank gets it */
  SC_STORE_OP_BYE = 8,    /* the client leaves on purpose (destroy), not by crashing */
  SC_STORE_OP_FAIL = 9,   /* the client failed; value = its sentence; the session fails */
  SC_STORE_OP_WATCH = 10  /* hello of a watch connection (see above) */
} sc_store_op_t;

/* Why a session failed, as a watch hears it. */
typedef enum sc_store_cause {
  SC_STORE_CAUSE_OTHER = 0,   /* a timeout, a disagreement, ...: the sentence says */
  SC_STORE_CAUSE_LOST = 1,    /* the rank's connection dropped without BYE (rank -1: the
                                 process serving the root exited) */
  SC_STORE_CAUSE_FAILED = 2,  /* the rank failed; the sentence is its own */
  SC_STORE_CAUSE_ABORTED = 3, /* the rank called symcomm_comm_abort */
  SC_STORE_CAUSE_LEFT = 4     /* not a failure: the rank destroyed its communicator (BYE) */
} sc_store_cause_t;

/* A watch reply's arg: the rank (low 32 bits, -1 for none) and the cause. */
static inline int64_t sc_store_watch_arg(int rank, sc_store_cause_t cause) {
  return (int64_t)(((uint64_t)cause << 32) | (uint32_t)rank);
}
static inline int sc_store_watch_rank(int64_t arg) { return (int32_t)(uint32_t)arg; }
static inline sc_store_cause_t sc_store_watch_cause(int64_t arg) {
  return (sc_store_cause_t)((uint64_t)arg >> 32);
}

/* The arg of a request's failure reply when the session failed (the
 * communicator is done for), rather than this request alone. */
#define SC_STORE_ARG_SESSION_FAILED 1

typedef struct sc_store_hello {
  uint32_t magic;
  uint16_t version;
  uint16_t op; /* SC_STORE_OP_HELLO */
  uint64_t session;
  int32_t rank;
  int32_t nranks;
} sc_store_hello_t;

typedef struct sc_store_request {
  uint32_t magic;
  uint16_t op;
  uint16_t reserved;
  uint32_t key_len;
  uint32_t value_len;
  int64_t arg;
  int64_t timeout_ms; /* how long the root may hold the request before replying TIMEOUT */
} sc_store_request_t;

typedef struct sc_store_reply {
  uint32_t magic;
  uint16_t status; /* symcomm_result_t */
  uint16_t reserved;
  uint32_t value_len;
  uint32_t text_len; /* the sentence that explains a failure */
  int64_t arg;
} sc_store_reply_t;

_Static_assert(sizeof(sc_store_hello_t) == 24, "hello layout");
_Static_assert(sizeof(sc_store_request_t) == 32, "request layout");
_Static_assert(sizeof(sc_store_reply_t) == 24, "reply layout");

#endif
