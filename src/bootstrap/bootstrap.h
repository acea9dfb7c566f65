/* A communicator's bootstrap: its connection to its root and the collectives
 * built on the store (all-gather, broadcast, barrier). Every rank calls them in
 * the same order; each call's key is "<step>#<sequence>" so that a timeout names
 * the step where ranks went missing. */
#ifndef SC_BOOTSTRAP_BOOTSTRAP_H
#define SC_BOOTSTRAP_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap/root.h"
#include "bootstrap/store_client.h"

typedef struct sc_bootstrap {
  sc_store_client_t client;
  uint64_t seq;
} sc_bootstrap_t;

sc_result_t sc_bootstrap_connect(sc_bootstrap_t *b, const sc_root_addr_t *root, int rank,
                                 int nranks, int64_t timeout_ms, int abort_fd);
/* mine: len bytes from this rank; all: nranks * len bytes, in rank order. */
sc_result_t sc_bootstrap_allgather(sc_bootstrap_t *b, const char *step, const void *mine,
                                   size_t len, void *all);
sc_result_t sc_bootstrap_bcast(sc_bootstrap_t *b, const char *step, int root, void *buf, size_t len);
sc_result_t sc_bootstrap_barrier(sc_bootstrap_t *b, const char *step);
/* The local address this rank reaches its root from. */
sc_result_t sc_bootstrap_local_address(const sc_bootstrap_t *b, sc_sockaddr_t *addr);
/* Cuts the connection from any thread, so that a wait in progress returns. */
void sc_bootstrap_shutdown(sc_bootstrap_t *b);
void sc_bootstrap_close(sc_bootstrap_t *b);
/* Leaves after a local failure: the other ranks learn `why`. */
void sc_bootstrap_fail(sc_bootstrap_t *b, const char *why);
/* The fd that interrupts this bootstrap's waits from now on. */
void sc_bootstrap_set_abort_fd(sc_bootstrap_t *b, int abort_fd);

#endif
