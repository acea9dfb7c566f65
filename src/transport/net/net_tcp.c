/* The TCP network: plain non-blocking sockets, TCP_NODELAY (control records
 * are small and must not wait for Nagle), MSG_NOSIGNAL (a peer that died
 * must not kill this process with SIGPIPE). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/net/net.h"
#include "util/socket.h"

struct sc_net_listener {
  int fd;
};

struct sc_net_conn {
  int fd;
  int err; /* a connect that failed at once */
  char remote[SC_SOCKADDR_TEXT];
};

/* The address blob: a tag, the family, the port and the raw address. */
typedef struct tcp_addr {
  char tag[4]; /* "TCP" */
  uint16_t family;
  uint16_t port; /* host order */
  uint8_t ip[16];
} tcp_addr_t;

static void tcp_to_blob(const sc_sockaddr_t *sa, sc_net_addr_t *addr) {
  tcp_addr_t t = {.tag = "TCP", .port = (uint16_t)sc_sockaddr_port(sa)};
  if (sa->storage.ss_family == AF_INET6) {
    t.family = 6;
    memcpy(t.ip, &((const struct sockaddr_in6 *)&sa->storage)->sin6_addr, 16);
  } else {
    t.family = 4;
    memcpy(t.ip, &((const struct sockaddr_in *)&sa->storage)->sin_addr, 4);
  }
  memset(addr, 0, sizeof(*addr));
  memcpy(addr->bytes, &t, sizeof(t));
}

static bool tcp_from_blob(const sc_net_addr_t *addr, sc_sockaddr_t *sa) {
  tcp_addr_t t;
  memcpy(&t, addr->bytes, sizeof(t));
  if (memcmp(t.tag, "TCP", 4) != 0 || (t.family != 4 && t.family != 6))
    return false;
  memset(sa, 0, sizeof(*sa));
  if (t.family == 6) {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa->storage;
    in6->sin6_family = AF_INET6;
    memcpy(&in6->sin6_addr, t.ip, 16);
    sa->len = sizeof(*in6);
  } else {
    struct sockaddr_in *in = (struct sockaddr_in *)&sa->storage;
    in->sin_family = AF_INET;
    memcpy(&in->sin_addr, t.ip, 4);
    sa->len = sizeof(*in);
  }
  sc_sockaddr_set_port(sa, t.port);
  return true;
}

static sc_result_t tcp_listen(sc_net_listener_t **out, sc_net_addr_t *addr) {
  sc_sockaddr_t sa, bound;
  char ifname[64];
  SC_CHECK(sc_socket_pick_address(&sa, ifname, sizeof(ifname)));
  sc_sockaddr_set_port(&sa, 0);
  int fd = -1;
  SC_CHECK(sc_socket_listen(&sa, &fd, &bound));
  sc_result_t r = sc_socket_set_nonblocking(fd);
  sc_net_listener_t *l = r == SYMCOMM_OK ? calloc(1, sizeof(*l)) : NULL;
  if (l == NULL) {
    close(fd);
    return r != SYMCOMM_OK ? r : SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for a listener");
  }
  l->fd = fd;
  tcp_to_blob(&bound, addr);
  char text[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(&bound, text, sizeof(text));
  SC_INFO(SC_NET, "network listens on %s (interface %s)", text, ifname);
  *out = l;
  return SYMCOMM_OK;
}

static int tcp_listener_fd(const sc_net_listener_t *l) { return l->fd; }

static void tcp_close_listener(sc_net_listener_t *l) {
  close(l->fd);
  free(l);
}

static sc_net_conn_t *tcp_conn_new(int fd, const sc_sockaddr_t *peer) {
  sc_net_conn_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->fd = fd;
  sc_sockaddr_format(peer, c->remote, sizeof(c->remote));
  return c;
}

static void tcp_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static sc_result_t tcp_accept(sc_net_listener_t *l, sc_net_conn_t **out) {
  sc_sockaddr_t peer;
  memset(&peer, 0, sizeof(peer));
  peer.len = sizeof(peer.storage);
  int fd = accept4(l->fd, (struct sockaddr *)&peer.storage, &peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    *out = NULL;
    /* A connection that was reset before it was taken is not this listener's failure. */
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
      return SYMCOMM_OK;
    return SYMCOMM_ERR_SYSTEM; /* errno says why (EMFILE: the caller makes room) */
  }
  tcp_nodelay(fd);
  sc_net_conn_t *c = tcp_conn_new(fd, &peer);
  if (c == NULL) {
    close(fd);
    return SYMCOMM_ERR_OUT_OF_MEMORY;
  }
  *out = c;
  return SYMCOMM_OK;
}

static sc_result_t tcp_connect(const sc_net_addr_t *addr, sc_net_conn_t **out) {
  sc_sockaddr_t sa;
  if (!tcp_from_blob(addr, &sa)) {
    errno = EINVAL;
    return SYMCOMM_ERR_INVALID_ARGUMENT;
  }
  int fd = socket(sa.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return SYMCOMM_ERR_SYSTEM;
  tcp_nodelay(fd);
  sc_net_conn_t *c = tcp_conn_new(fd, &sa);
  if (c == NULL) {
    close(fd);
    return SYMCOMM_ERR_OUT_OF_MEMORY;
  }
  /* A refusal may come at once (loopback): kept for connect_done, which the
   * engine calls when poll() says the fd is writable (an unconnected socket is
   * at once). */
  if (connect(fd, (const struct sockaddr *)&sa.storage, sa.len) != 0 && errno != EINPROGRESS)
    c->err = errno;
  *out = c;
  return SYMCOMM_OK;
}

static void tcp_connect_done(sc_net_conn_t *c, bool *done, bool *retry, int *err) {
  int e = c->err;
  if (e == 0) {
    socklen_t len = sizeof(e);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
      e = errno;
  }
  *done = e == 0;
  *err = e;
  *retry = e == ECONNREFUSED || e == ETIMEDOUT || e == EHOSTUNREACH || e == ENETUNREACH ||
           e == ECONNRESET || e == EAGAIN;
}

static int tcp_fd(const sc_net_conn_t *c) { return c->fd; }

static sc_result_t tcp_send(sc_net_conn_t *c, const struct iovec *iov, int iovcnt, size_t *moved) {
  struct msghdr msg = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
  *moved = 0;
  for (;;) {
    ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      *moved = (size_t)n;
      return SYMCOMM_OK;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return SYMCOMM_OK;
    return errno == EPIPE || errno == ECONNRESET ? SYMCOMM_ERR_REMOTE : SYMCOMM_ERR_SYSTEM;
  }
}

static sc_result_t tcp_recv(sc_net_conn_t *c, void *buf, size_t len, size_t *moved) {
  *moved = 0;
  for (;;) {
    ssize_t n = recv(c->fd, buf, len, MSG_DONTWAIT);
    if (n > 0) {
      *moved = (size_t)n;
      return SYMCOMM_OK;
    }
    if (n == 0)
      return SYMCOMM_ERR_REMOTE;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return SYMCOMM_OK;
    return errno == ECONNRESET ? SYMCOMM_ERR_REMOTE : SYMCOMM_ERR_SYSTEM;
  }
}

static const char *tcp_remote(const sc_net_conn_t *c) { return c->remote; }

static void tcp_addr_text(const sc_net_addr_t *addr, char *buf, size_t len) {
  sc_sockaddr_t sa;
  if (tcp_from_blob(addr, &sa))
    sc_sockaddr_format(&sa, buf, len);
  else
    snprintf(buf, len, "(not a TCP address)");
}

static void tcp_close(sc_net_conn_t *c) {
  close(c->fd);
  free(c);
}

const sc_net_ops_t sc_net_tcp_ops = {
    .size = sizeof(sc_net_ops_t),
    .name = "tcp",
    .listen = tcp_listen,
    .listener_fd = tcp_listener_fd,
    .accept = tcp_accept,
    .close_listener = tcp_close_listener,
    .connect = tcp_connect,
    .connect_done = tcp_connect_done,
    .fd = tcp_fd,
    .send = tcp_send,
    .recv = tcp_recv,
    .remote = tcp_remote,
    .addr_text = tcp_addr_text,
    .close = tcp_close,
};

/* The registry: one network today. */
static const sc_net_ops_t *const net_registry[] = {&sc_net_tcp_ops};

const sc_net_ops_t *sc_net_default_ops(void) { return net_registry[0]; }
