/* What the root keeps for one session and how it answers requests: the keys,
 * the gathers in progress, and which ranks have joined, left or been lost.
 * Used only by the server's event loop (one thread), so nothing here locks. */
#ifndef SC_BOOTSTRAP_STORE_SESSION_H
#define SC_BOOTSTRAP_STORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/store_output.h"
#include "bootstrap/store_proto.h"
#include "util/error.h"
#include "util/socket.h"

typedef struct sc_store_session sc_store_session_t;
typedef struct sc_store_gather sc_store_gather_t;

/* One client connection, as the event loop and the session both see it. */
typedef struct sc_store_conn {
  int fd;
  char peer[SC_SOCKADDR_TEXT];
  bool greeted; /* a hello arrived (accepted or not) */
  bool ready;   /* the hello was accepted and the connection belongs to a session */
  bool closing; /* flush the output, then close */
  bool watch;   /* a rank's watch connection (store_proto.h), not its requests */
  int64_t hello_deadline;
  int64_t active_at; /* the last bytes in, or the last reply to a held request */
  sc_store_session_t *session;
  int rank;

  /* input: a header, then its payload (key bytes then value bytes) */
  unsigned char header[sizeof(sc_store_request_t)];
  size_t header_got;
  char *payload;
  size_t payload_len, payload_got;

  /* a request held until it can be answered */
  bool parked;
  sc_store_request_t request;
  char *key;
  int64_t deadline;
  sc_store_gather_t *gather; /* for GATHER / BCAST */

  sc_store_output_t out; /* replies not yet accepted by the socket */

  struct sc_store_conn *next;
} sc_store_conn_t;

/* Queues a reply on the connection (sent by the event loop). */
void sc_store_conn_reply(sc_store_conn_t *conn, sc_result_t status, int64_t arg,
                         const void *value, size_t value_len, const char *text);

/* How a connection leaves its session. */
typedef enum sc_store_departure {
  SC_STORE_LEFT,     /* BYE: the rank destroyed its communicator */
  SC_STORE_FAILED,   /* FAIL: the rank failed and says why (the session fails) */
  SC_STORE_LOST,     /* the connection dropped: abort, exit or kill (the session fails) */
  SC_STORE_REJECTED  /* the root closed it for breaking the protocol (the session fails) */
} sc_store_departure_t;

/* Looks up or creates a session and admits conn as `rank` (from its hello).
 * On refusal, a reply explaining why is queued and conn is marked closing;
 * refusals that mean the job is misconfigured also fail the session. */
void sc_store_session_admit(sc_store_session_t **sessions, sc_store_conn_t *conn, uint64_t id,
                            int rank, int nranks);

/* Admits conn as the watch of `rank` of session `id` (a WATCH hello): it is
 * answered when the session fails, at once if it already has. Refused (with
 * a reply, conn closing) when the rank has not joined or is watched already. */
void sc_store_session_watch(sc_store_session_t *sessions, sc_store_conn_t *conn, uint64_t id,
                            int rank, int nranks);

/* Handles a complete request (conn->request, key and value in conn->payload):
 * answers it now or parks conn. Takes nothing from the caller's buffers. */
void sc_store_session_handle(sc_store_conn_t *conn);

/* The connection leaves its session; `why` details FAILED and REJECTED. */
void sc_store_session_detach(sc_store_conn_t *conn, sc_store_departure_t how, const char *why);

/* Answers parked requests whose deadline has passed, and drops connections
 * that have waited for nothing for forming_idle_ms in a session whose first
 * all-gather has not completed (SC_STORE_FORMING_IDLE_MS): their ranks may
 * join again.
 * Returns the earliest deadline still pending (SC_DEADLINE_NEVER if none). */
int64_t sc_store_session_expire(sc_store_session_t *sessions, int64_t now, int64_t forming_idle_ms);

/* Fails the session: every parked and future request gets (result, why). */
void sc_store_session_fail(sc_store_session_t *session, sc_result_t result, const char *why);
/* The same, naming `rank` and why (`detail` its own sentence) for watches. */
void sc_store_session_fail_by(sc_store_session_t *session, sc_result_t result, int rank,
                              sc_store_cause_t cause, const char *detail);
void sc_store_session_fail_all(sc_store_session_t *sessions, sc_result_t result, const char *why);
/* The process serving the root is exiting: its watches hear it as a lost rank. */
void sc_store_session_fail_all_exiting(sc_store_session_t *sessions, const char *why);
sc_store_session_t *sc_store_session_find(sc_store_session_t *sessions, uint64_t id);

/* True when every rank of every session has joined at some point. */
bool sc_store_session_all_joined(const sc_store_session_t *sessions);

/* Frees sessions that ended cleanly (every rank joined, then left); all of
 * them when `all`. Failed or incomplete sessions stay, so that a late rank
 * still learns what happened, up to SC_STORE_MAX_SESSIONS. */
void sc_store_session_collect(sc_store_session_t **sessions, bool all);

#endif
