/* A network: how bytes reach a rank on another host. It is a const ops table
 * chosen from a static registry, as NCCL's net plugins are: TCP (net_tcp.c)
 * is the only one today; an RDMA network would add a table of its own, with
 * its completion channel as the fd the engine polls. Every call is
 * non-blocking: the engine (net_engine.h) waits in poll() on the fds these
 * give, so one thread serves every connection. Calls do not log or record an
 * error sentence: the engine knows which operation a failure belongs to and
 * says it. */
#ifndef SC_TRANSPORT_NET_NET_H
#define SC_TRANSPORT_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/error.h"

/* Where a rank listens, as the network writes it: opaque to everyone else
 * (all-gathered through the bootstrap). */
#define SC_NET_ADDR_BYTES 128
typedef struct sc_net_addr {
  uint8_t bytes[SC_NET_ADDR_BYTES];
} sc_net_addr_t;

typedef struct sc_net_listener sc_net_listener_t;
typedef struct sc_net_conn sc_net_conn_t;

typedef struct sc_net_ops {
  size_t size; /* sizeof(sc_net_ops_t): a table built against another layout is refused */
  const char *name;
  /* Listens on the interface sc_socket_pick_address chooses
   * (SYMCOMM_SOCKET_IFNAME, SYMCOMM_SOCKET_FAMILY), on a free port. Raises. */
  sc_result_t (*listen)(sc_net_listener_t **listener, sc_net_addr_t *addr);
  int (*listener_fd)(const sc_net_listener_t *listener);
  /* One connection that waits to be accepted, or *conn = NULL when none does. */
  sc_result_t (*accept)(sc_net_listener_t *listener, sc_net_conn_t **conn);
  void (*close_listener)(sc_net_listener_t *listener);
  /* Starts connecting; the fd becomes writable when connect_done can tell. */
  sc_result_t (*connect)(const sc_net_addr_t *addr, sc_net_conn_t **conn);
  /* *done: connected. Else *err is the reason (errno) and *retry says whether
   * a new connect may succeed later (nobody listens yet, the network is unreachable). */
  void (*connect_done)(sc_net_conn_t *conn, bool *done, bool *retry, int *err);
  int (*fd)(const sc_net_conn_t *conn);
  /* Move what the kernel takes or gives now (*moved may be 0). REMOTE: the
   * peer closed or reset the connection (recv: end of stream); SYSTEM:
   * another failure, errno says which. */
  sc_result_t (*send)(sc_net_conn_t *conn, const struct iovec *iov, int iovcnt, size_t *moved);
  sc_result_t (*recv)(sc_net_conn_t *conn, void *buf, size_t len, size_t *moved);
  /* "10.0.0.2:41234": the other end, for log lines and sentences. */
  const char *(*remote)(const sc_net_conn_t *conn);
  void (*addr_text)(const sc_net_addr_t *addr, char *buf, size_t len);
  void (*close)(sc_net_conn_t *conn);
} sc_net_ops_t;

extern const sc_net_ops_t sc_net_tcp_ops;

/* The network endpoints use: the registry's first entry (TCP). */
const sc_net_ops_t *sc_net_default_ops(void);

#endif
