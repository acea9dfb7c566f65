/* Where a job's root is and which session it serves: what a unique id holds,
 * what a split communicator's new root publishes, and how roots are started. */
#ifndef SC_BOOTSTRAP_ROOT_H
#define SC_BOOTSTRAP_ROOT_H

#include <stdbool.h>
#include <stdint.h>

#include "bootstrap/store_server.h"
#include "util/error.h"
#include "util/socket.h"

typedef struct sc_root_addr {
  sc_sockaddr_t addr;
  uint64_t session;
} sc_root_addr_t;

/* A random non-zero 64-bit value, for session ids. */
sc_result_t sc_root_random_session(uint64_t *session);

/* Unique ids carry a root address in a fixed, checked layout. */
void sc_root_encode(const sc_root_addr_t *root, symcomm_unique_id_t *id);
sc_result_t sc_root_decode(const symcomm_unique_id_t *id, sc_root_addr_t *root);

/* Starts a root for one session in this process. It listens on `where` when
 * given (its port; every interface), else on a new port of `near` when given
 * (the address this process uses to reach another root: its peers can reach
 * it there too), else on the interface SYMCOMM_SOCKET_IFNAME picks. *root says
 * how to reach it. The caller owns *server (release it when done). */
sc_result_t sc_root_start(const sc_sockaddr_t *where, const sc_sockaddr_t *near, uint64_t session,
                          int64_t idle_timeout_ms, sc_root_addr_t *root, sc_store_server_t **server);

#endif
