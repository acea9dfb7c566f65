/* Passing file descriptors between the ranks of one host (SCM_RIGHTS over
 * Unix sockets in the abstract namespace, so nothing is left in the file
 * system): how an exported allocation reaches the peers that map it. */
#ifndef SC_WINDOW_FD_EXCHANGE_H
#define SC_WINDOW_FD_EXCHANGE_H

#include <stdint.h>
#include <sys/un.h>

#include "window/comm_view.h"

#define SC_FD_EXCHANGE_MAX_FDS 4

/* What one rank gives its local peers: nfds descriptors and a few numbers. */
typedef struct sc_fd_bundle {
  int nfds;
  int fds[SC_FD_EXCHANGE_MAX_FDS];
  uint64_t words[4];
} sc_fd_bundle_t;

/* One exchange, in the order window creation uses it:
 *   sc_fd_exchange_open   local work: this rank's listener and a socket per peer
 *   (the caller's all-gather of every rank's result: nobody connects before
 *    all listen, and a rank that failed so far makes every rank stop here)
 *   sc_fd_exchange_run    passes `mine` to every local peer, takes theirs
 *   sc_fd_exchange_close  always, whatever happened before
 * Every rank opens every exchange, also after a local failure and also when
 * alone on its host: that draws the exchange's number (view->exchanges, part
 * of the sockets' names), which must stay equal on all ranks. */
typedef struct sc_fd_exchange {
  sc_comm_view_t *view;
  uint64_t seq;
  int listener;             /* -1 alone on this host or after a failure */
  struct sc_fd_link *links; /* [local_size]; NULL alone on this host or after a failure */
} sc_fd_exchange_t;

/* Always draws the exchange's number; on failure releases what it made
 * (*x can still be closed). */
sc_result_t sc_fd_exchange_open(sc_comm_view_t *view, sc_fd_exchange_t *x);

/* Call only once every rank's open succeeded. On return got[l] is the bundle
 * of local rank l (received fds are the caller's to close; got[local_rank] is
 * left empty); on failure got holds nothing. Peers prove they are ranks of
 * the communicator with a token derived from its secret (not by pid, which
 * differs between PID namespaces), so a stray process cannot slip a
 * descriptor in; a connection that does not bring a whole message within
 * about a second is dropped, and a peer whose socket refuses this rank's
 * connection is given up on after two seconds, with a sentence that says why
 * that happens (it stopped, or another network namespace). Every wait is
 * bounded (half the view's timeout, so that ranks still meet in the caller's
 * next all-gather when one could not pass its handles) and ends on abort.
 * A rank that fails here still passes its own bundle to the peers it can. */
sc_result_t sc_fd_exchange_run(sc_fd_exchange_t *x, const char *step, const sc_fd_bundle_t *mine,
                               sc_fd_bundle_t *got);

void sc_fd_exchange_close(sc_fd_exchange_t *x);

/* The abstract socket (a name derived from the communicator's secret) on
 * which local rank `local` takes handles in exchange `seq`; the length to
 * bind or connect with. */
socklen_t sc_fd_exchange_address(const sc_comm_view_t *view, uint64_t seq, int local,
                                 struct sockaddr_un *addr);

/* Closes every received descriptor of got[0..n). */
void sc_fd_bundles_close(sc_fd_bundle_t *got, int n);

#endif
