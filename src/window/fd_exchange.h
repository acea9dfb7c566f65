/* Passing file descriptors between the ranks of one host (SCM_RIGHTS over
 * Unix sockets in the abstract namespace, so nothing is left in the file
 * system): how an exported allocation reaches the peers that map it. */
#ifndef SC_WINDOW_FD_EXCHANGE_H
#define SC_WINDOW_FD_EXCHANGE_H

#include <stdint.h>

#include "window/comm_view.h"

#define SC_FD_EXCHANGE_MAX_FDS 4

/* What one rank gives its local peers: nfds descriptors and a few numbers. */
typedef struct sc_fd_bundle {
  int nfds;
  int fds[SC_FD_EXCHANGE_MAX_FDS];
  uint64_t words[4];
} sc_fd_bundle_t;

/* Collective over the communicator (every rank calls it, also those alone on
 * their host). On return got[l] is the bundle of local rank l (received fds
 * are the caller's to close; got[local_rank] is left empty). Peers are checked
 * by pid: a stray process cannot slip a descriptor in. */
sc_result_t sc_fd_exchange(sc_comm_view_t *view, const char *step, const sc_fd_bundle_t *mine,
                           sc_fd_bundle_t *got);

/* Closes every received descriptor of got[0..n). */
void sc_fd_bundles_close(sc_fd_bundle_t *got, int n);

#endif
