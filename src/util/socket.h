/* TCP sockets with deadlines: addresses (IPv4 and IPv6), choice of the
 * interface to listen on, connect with retry and backoff, and whole-buffer
 * send/receive that give up at a deadline or when an abort fd is signalled. */
#ifndef SC_UTIL_SOCKET_H
#define SC_UTIL_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/error.h"

typedef struct sc_sockaddr {
  struct sockaddr_storage storage;
  socklen_t len;
} sc_sockaddr_t;

#define SC_SOCKADDR_TEXT 64 /* enough for "[v6 address]:port" */

/* Resolves "host:port", "[v6addr]:port" or "v6addr" with a port given apart
 * (port >= 0 overrides one in the text; pass -1 to require it in the text). */
sc_result_t sc_sockaddr_parse(const char *text, int port, sc_sockaddr_t *out);
void sc_sockaddr_format(const sc_sockaddr_t *addr, char *buf, size_t len);
int sc_sockaddr_port(const sc_sockaddr_t *addr);
void sc_sockaddr_set_port(sc_sockaddr_t *addr, int port);
/* The wildcard address of the same family and port (to listen on every interface). */
void sc_sockaddr_any(const sc_sockaddr_t *addr, sc_sockaddr_t *any);

/* Address of the interface a root should listen on, honouring
 * SYMCOMM_SOCKET_IFNAME and SYMCOMM_SOCKET_FAMILY. Without them: the first
 * interface that is up and not loopback or docker, else loopback. */
sc_result_t sc_socket_pick_address(sc_sockaddr_t *addr, char *ifname, size_t ifname_len);
/* Whether interface name `ifname` passes a SYMCOMM_SOCKET_IFNAME-style filter. */
bool sc_socket_ifname_matches(const char *filter, const char *ifname);

/* Listening socket (SO_REUSEADDR, close-on-exec); *bound gets the actual address. */
sc_result_t sc_socket_listen(const sc_sockaddr_t *addr, int *fd, sc_sockaddr_t *bound);
/* Connects, retrying with backoff while the peer is not listening yet, until
 * the deadline (TIMEOUT) or abort_fd becomes readable (ABORTED). */
sc_result_t sc_socket_connect(const sc_sockaddr_t *addr, int64_t deadline_ms, int abort_fd,
                              int *fd);
/* Moves exactly len bytes; `peer` names the other side in error sentences.
 * REMOTE when the peer closes, TIMEOUT at the deadline, ABORTED on abort_fd. */
sc_result_t sc_socket_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms,
                               int abort_fd, const char *peer);
sc_result_t sc_socket_recv_all(int fd, void *buf, size_t len, int64_t deadline_ms, int abort_fd,
                               const char *peer);
sc_result_t sc_socket_set_nonblocking(int fd);

#endif
