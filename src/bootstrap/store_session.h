/* What the root keeps for one session and how it answers requests: the keys,
 * the gathers in progress, and which ranks have joined, left or been lost.
 * Used only by the server's event loop (one thread), so nothing here locks. */
#ifndef SC_BOOTSTRAP_STORE_SESSION_H
#define SC_BOOTSTRAP_STORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/store_proto.h"
#include "util/error.h"
#include "util/socket.h"

typedef struct sc_store_session sc_store_session_t;
typedef struct sc_store_gather sc_store_gather_t;

/* One client connection, as the event loop and the session both see it. */
typedef struct sc_store_conn {
  int fd;
  char peer[SC_SOCKADDR_TEXT];
  bool ready;   /* the hello was accepted */
  bool closing; /* flush the output, then close */
  int64_t hello_deadline;
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

  /* output not yet accepted by the socket */
  char *out;
  size_t out_len, out_sent, out_cap;

  struct sc_store_conn *next;
} sc_store_conn_t;

/* Queues a reply on the connection (sent by the event loop). */
void sc_store_conn_reply(sc_store_conn_t *conn, sc_result_t status, int64_t arg,
                         const void *value, size_t value_len, const char *text);

/* Looks up or creates a session and admits conn as `rank` (from its hello).
 * On refusal, a reply explaining why is queued and conn is marked closing;
 * refusals that mean the job is misconfigured also fail the session. */
void sc_store_session_admit(sc_store_session_t **sessions, sc_store_conn_t *conn, uint64_t id,
                            int rank, int nranks);

/* Handles a complete request (conn->request, key and value in conn->payload):
 * answers it now or parks conn. Takes nothing from the caller's buffers. */
void sc_store_session_handle(sc_store_conn_t *conn);

/* The connection is going away (closed by the peer, or BYE received). */
void sc_store_session_detach(sc_store_conn_t *conn, bool said_bye);

/* Answers parked requests whose deadline has passed; returns the earliest
 * deadline still pending (SC_DEADLINE_NEVER if none). */
int64_t sc_store_session_expire(sc_store_session_t *sessions, int64_t now);

/* Fails the session: every parked and future request gets (result, why). */
void sc_store_session_fail(sc_store_session_t *session, sc_result_t result, const char *why);
void sc_store_session_fail_all(sc_store_session_t *sessions, sc_result_t result, const char *why);
sc_store_session_t *sc_store_session_find(sc_store_session_t *sessions, uint64_t id);

/* Frees sessions that every rank has left; all of them when `all`. */
void sc_store_session_collect(sc_store_session_t **sessions, bool all);

#endif
