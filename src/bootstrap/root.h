/* Where a communicator's root is and which session it serves: what a unique id
 * holds, what a split communicator's new root publishes, and how roots are
 * started.
 *
 * Every communicator has a 128-bit secret that only its ranks know (random
 * for a unique id or a split, derived from the launcher job's key for
 * symcomm_init_from_env; see job.h). Its session id, which a rank shows the
 * root in its hello, is derived from the secret, as is everything else that
 * must be unique to the communicator and unguessable (the fd exchange's
 * socket names and tokens): seeing a session id on the network tells nothing
 * of the secret. */
#ifndef SC_BOOTSTRAP_ROOT_H
#define SC_BOOTSTRAP_ROOT_H

#include <stdbool.h>
#include <stdint.h>

#include "bootstrap/store_server.h"
#include "util/error.h"
#include "util/secret.h"
#include "util/socket.h"

typedef struct sc_root_addr {
  sc_sockaddr_t addr;
  sc_secret_t secret; /* the communicator's */
  uint64_t session;   /* sc_root_session(&secret) */
} sc_root_addr_t;

/* The session id of a communicator's secret (never 0). */
uint64_t sc_root_session(const sc_secret_t *secret);
/* Sets root->secret and the session id that goes with it. */
void sc_root_set_secret(sc_root_addr_t *root, const sc_secret_t *secret);

/* Unique ids carry a root address and the secret in a fixed, checked layout. */
void sc_root_encode(const sc_root_addr_t *root, symcomm_unique_id_t *id);
sc_result_t sc_root_decode(const symcomm_unique_id_t *id, sc_root_addr_t *root);

/* Starts a root for one communicator in this process, serving its session
 * alone. It listens on `where` when given (its port; every interface), else
 * on a new port of `near` when given (the address this process uses to reach
 * another root: its peers can reach it there too), else on the interface
 * SYMCOMM_SOCKET_IFNAME picks. *root says how to reach it. The caller owns
 * *server (release it when done). */
sc_result_t sc_root_start(const sc_sockaddr_t *where, const sc_sockaddr_t *near,
                          const sc_secret_t *secret, int64_t idle_timeout_ms, sc_root_addr_t *root,
                          sc_store_server_t **server);

#endif
