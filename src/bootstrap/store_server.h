/* The root: a small key-value store served over TCP by a thread of one process
 * (the process that called symcomm_get_unique_id, rank 0 under a launcher, or
 * rank 0 of a split communicator). It serves sessions — one per job or split
 * communicator — and answers each request or holds it until it can be answered
 * or its timeout passes. See store_proto.h for the protocol.
 *
 * Anyone who can reach the port can connect, so the root trusts no client
 * before its hello names a session the root serves (session ids are derived
 * from secrets only ranks know: root.h), and bounds what strangers can hold:
 * a few connections awaiting their hello, each for a few seconds. See
 * docs/SECURITY.md. */
#ifndef SC_BOOTSTRAP_STORE_SERVER_H
#define SC_BOOTSTRAP_STORE_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

typedef struct sc_store_server sc_store_server_t;

/* Whether the root serves `session`, which no client has opened yet. Called
 * on the server's thread. */
typedef bool sc_store_serves_fn(void *ctx, uint64_t session);

/* Connections that have not said hello yet: at most this many at once (the
 * oldest is dropped for a new one), each for at most hello_timeout_ms. */
#define SC_STORE_MAX_UNGREETED 64
#define SC_STORE_HELLO_TIMEOUT_MS 10000
/* Until a session's first all-gather has completed, a joined connection that
 * waits for nothing is dropped after this long without a request, and its
 * rank may join again: a rank of this library waits in that all-gather from
 * its hello on, so such a connection only holds a rank's place for someone
 * else. Afterwards idle connections are the norm (a job between two splits)
 * and stay. */
#define SC_STORE_FORMING_IDLE_MS 10000

typedef struct sc_store_server_config {
  uint64_t only_session;      /* != 0: the one session served */
  sc_store_serves_fn *serves; /* else: asked about every session not known yet */
  void *serves_ctx;           /* must outlive the server */
  /* A persistent server runs until the process exits; any other ends once
   * released and every client has left, or, if no client ever joined,
   * idle_timeout_ms after its release. */
  bool persistent;
  int64_t idle_timeout_ms;
  int64_t hello_timeout_ms;   /* 0: SC_STORE_HELLO_TIMEOUT_MS */
  int64_t forming_idle_ms;    /* 0: SC_STORE_FORMING_IDLE_MS */
} sc_store_server_config_t;

/* Serves on listen_fd (taken over; closed when the server ends). */
sc_result_t sc_store_server_start(int listen_fd, const sc_store_server_config_t *config,
                                  sc_store_server_t **server);

/* Fails every pending and future request of a session with `result` and `why`
 * (e.g. rank 0 aborted). Callable from any thread while the server is held. */
void sc_store_server_fail_session(sc_store_server_t *server, uint64_t session,
                                  sc_result_t result, const char *why);

/* At process exit, `hook` runs before this process's roots fail what they
 * hold and flush: the layer above uses it to name its ranks that exit
 * without leaving (sc_store_server_rank_exits). */
void sc_store_server_set_exit_hook(void (*hook)(void));
/* A rank of this process exits without leaving `session`: a root of this
 * process that serves it fails it at once, naming the rank as lost, before
 * the exit drain fails it less precisely. */
void sc_store_server_rank_exits(uint64_t session, int rank);

/* Whether a root of this process serves only `session` (one started for it). */
bool sc_store_server_serves(uint64_t session);

/* The caller lets go of the server; it ends (and frees itself) once no client
 * is connected. The pointer must not be used afterwards. */
void sc_store_server_release(sc_store_server_t *server);

#endif
