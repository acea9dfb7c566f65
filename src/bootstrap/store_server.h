/* The root: a small key-value store served over TCP by a thread of one process
 * (the process that called symcomm_get_unique_id, rank 0 under a launcher, or
 * rank 0 of a split communicator). It serves sessions — one per job or split
 * communicator — and answers each request or holds it until it can be answered
 * or its timeout passes. See store_proto.h for the protocol. */
#ifndef SC_BOOTSTRAP_STORE_SERVER_H
#define SC_BOOTSTRAP_STORE_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

typedef struct sc_store_server sc_store_server_t;

/* Serves on listen_fd (taken over; closed when the server ends). only_session
 * != 0 refuses every other session. A persistent server runs until the process
 * exits; any other ends once released and every client has left, or, if no
 * client ever joined, idle_timeout_ms after its release. */
sc_result_t sc_store_server_start(int listen_fd, uint64_t only_session, bool persistent,
                                  int64_t idle_timeout_ms, sc_store_server_t **server);

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
